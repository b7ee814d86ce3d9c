// The account: who is signed in, and deleting the account with its password.
import { useState } from 'preact/hooks';
import { api, ok } from '../api.ts';
import { ErrorNote, TextField, useAction } from '../ui.tsx';
import type { Session } from './sign-in.tsx';

export function AccountPage({ session }: { session: Session }) {
  const [password, setPassword] = useState('');
  const [done, setDone] = useState(false);
  const [remove, error, removing] = useAction(async () => {
    await ok(api.DELETE('/v1/account', { body: { password } }));
    setDone(true);
  });
  if (done) {
    return (
      <section>
        <h1>Account deleted</h1>
        <p>
          Your account, its batches and its keys are gone. <a href="/studio/">Back to sign-in</a>
        </p>
      </section>
    );
  }
  return (
    <section aria-labelledby="account-title">
      <h1 id="account-title">Account</h1>
      <p>
        Signed in as <strong>{session.email}</strong>.
      </p>
      <form
        class="panel danger-zone"
        onSubmit={(event) => {
          event.preventDefault();
          void remove();
        }}
      >
        <h2>Delete the account</h2>
        <p>Deleting the account cannot be undone. It at once:</p>
        <ul>
          <li>revokes every API key, so scripts using them stop working;</li>
          <li>deletes every batch, its photos and results;</li>
          <li>gives up the credits left on the plan and in packs (they are not refunded).</li>
        </ul>
        <TextField
          id="delete-password"
          label="Password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onValue={setPassword}
        />
        <ErrorNote error={error} />
        <button type="submit" class="danger" disabled={removing}>
          Delete account
        </button>
      </form>
    </section>
  );
}
