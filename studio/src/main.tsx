// The studio: sign in, then batches, keys, credits and the account, all through @matte/client.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ok, onSignedOut, setCsrfToken } from './api.ts';
import { Link, navigate, useAction, usePath, ErrorNote } from './ui.tsx';
import { SignIn, type Session } from './pages/sign-in.tsx';
import { BatchesPage } from './pages/batches.tsx';
import { BatchPage } from './pages/batch.tsx';
import { PhotoPage } from './pages/photo.tsx';
import { KeysPage } from './pages/keys.tsx';
import { CreditsPage } from './pages/credits.tsx';
import { AccountPage } from './pages/account.tsx';

const NAV = [
  ['/batches', 'Batches'],
  ['/keys', 'Keys'],
  ['/credits', 'Credits'],
  ['/account', 'Account'],
] as const;

function App() {
  const path = usePath();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [expired, setExpired] = useState(false);

  useEffect(() => {
    api.GET('/v1/session').then(
      ({ data }) => adopt(data ?? null),
      () => adopt(null),
    );
    // A request answered 401: the session ended. The page stays as it is (nothing typed is lost) and a
    // sign-in dialog covers it; after signing in, the user sends again what was refused.
    return onSignedOut(() => setExpired(true));
  }, []);

  function adopt(next: Session | null) {
    setCsrfToken(next?.csrfToken);
    setSession(next);
  }

  const [signOut, signOutError] = useAction(async () => {
    await ok(api.DELETE('/v1/session'));
    adopt(null);
    navigate('/');
  });

  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null) {
    return (
      <SignIn
        onSignedIn={(next) => {
          adopt(next);
          if (path === '/' || path === '') navigate('/batches');
        }}
      />
    );
  }

  const section = '/' + (path.split('/')[1] || 'batches');
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top" inert={expired}>
        <span class="brand">Matte studio</span>
        <nav aria-label="Main">
          <ul>
            {NAV.map(([to, label]) => (
              <li key={to}>
                <Link to={to} aria-current={section === to ? 'page' : undefined}>
                  {label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">{session.email}</span>
        <button type="button" class="quiet" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <ErrorNote error={signOutError} />
      <main id="main" tabIndex={-1} inert={expired}>
        <Route path={path} session={session} />
      </main>
      {expired ? (
        <SignIn
          dialog
          onSignedIn={(next) => {
            setExpired(false);
            adopt(next);
          }}
        />
      ) : null}
    </>
  );
}

function Route({ path, session }: { path: string; session: Session }) {
  const parts = path.split('/').filter(Boolean);
  useEffect(() => {
    document.getElementById('main')?.focus({ preventScroll: true });
  }, [path]);
  if (parts[0] === 'batches' && parts[1] && parts[2] === 'photos' && parts[3])
    return <PhotoPage batchId={parts[1]} itemId={parts[3]} />;
  if (parts[0] === 'batches' && parts[1]) return <BatchPage id={parts[1]} />;
  if (parts[0] === 'keys') return <KeysPage />;
  if (parts[0] === 'credits') return <CreditsPage />;
  if (parts[0] === 'account') return <AccountPage session={session} />;
  return <BatchesPage />;
}

render(<App />, document.getElementById('app')!);
