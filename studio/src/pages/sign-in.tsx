// Sign in with the account's e-mail and password (set with `matte accounts create --password-stdin`).
import { useState } from 'preact/hooks';
import type { StudioSession } from '@matte/client';
import { api, ok } from '../api.ts';
import { ErrorNote, TextField, useAction } from '../ui.tsx';

export type Session = StudioSession;

/** The sign-in page, or (`dialog`) the dialog over a page whose session ended, which keeps what was typed. */
export function SignIn({ onSignedIn, dialog = false }: { onSignedIn: (session: Session) => void; dialog?: boolean }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [submit, error, busy] = useAction(async () => {
    onSignedIn(await ok(api.POST('/v1/session', { body: { email, password } })));
  });
  const body = (
    <>
      <h1 id="sign-in-title">{dialog ? 'Your session has ended' : 'Sign in to Matte studio'}</h1>
      {dialog ? <p>Sign in again to carry on: what you entered on the page is still there.</p> : null}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void submit();
        }}
      >
        <TextField
          id="email"
          label="Email"
          type="email"
          autocomplete="username"
          required
          autofocus={dialog}
          value={email}
          onValue={setEmail}
        />
        <TextField
          id="password"
          label="Password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onValue={setPassword}
        />
        <ErrorNote error={error} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </>
  );
  if (!dialog)
    return (
      <main id="main" class="sign-in">
        {body}
      </main>
    );
  return (
    <div class="backdrop">
      <div class="sign-in dialog" role="dialog" aria-modal="true" aria-labelledby="sign-in-title">
        {body}
      </div>
    </div>
  );
}
