// API keys: create one with a name (its secret shown once, with a copy button), list them with prefix,
// creation and last use, and revoke with a confirmation. Ten active keys at most.
import { useEffect, useState } from 'preact/hooks';
import type { ApiKey as Key } from '@matte/client';
import { api, describeError, ok, type Shown } from '../api.ts';
import { DataTable, ErrorNote, TextField, formatDate, useAction } from '../ui.tsx';

const MAX_ACTIVE = 10;

export function KeysPage() {
  const [keys, setKeys] = useState<Key[]>([]);
  const [name, setName] = useState('');
  const [secret, setSecret] = useState<{ name: string; apiKey: string } | null>(null);
  const [copied, setCopied] = useState('');
  const [confirming, setConfirming] = useState<string | null>(null);
  const [loadError, setLoadError] = useState<Shown | null>(null);

  async function load() {
    try {
      setKeys((await ok(api.GET('/v1/keys'))).keys);
    } catch (err) {
      setLoadError(describeError(err));
    }
  }
  useEffect(() => {
    void load();
  }, []);

  const [create, createError, creating] = useAction(async () => {
    const created = await ok(api.POST('/v1/keys', { body: { name: name.trim() } }));
    setSecret({ name: created.key.name, apiKey: created.apiKey });
    setCopied('');
    setName('');
    await load();
  });
  const [revoke, revokeError] = useAction(async (id: string) => {
    await ok(api.DELETE('/v1/keys/{keyId}', { params: { path: { keyId: id } } }));
    setConfirming(null);
    await load();
  });

  const active = keys.filter((key) => key.state === 'active').length;
  const full = active >= MAX_ACTIVE;
  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      <p>
        Keys let your scripts and the <code>matte</code> command use your account. Each is shown once, when it is made.
      </p>
      <ErrorNote error={loadError} />
      {secret ? (
        <div class="panel secret" role="status">
          <h2>Your new key “{secret.name}”</h2>
          <p class="warning">Copy it now: it is not shown again. Anyone with it can spend your credits.</p>
          <label for="new-key">Secret</label>
          <div class="copy-row">
            <input id="new-key" readOnly value={secret.apiKey} onFocus={(e) => e.currentTarget.select()} />
            <button
              type="button"
              onClick={() =>
                navigator.clipboard.writeText(secret.apiKey).then(
                  () => setCopied('Copied.'),
                  () => setCopied('Copying is not allowed here: select the key and copy it yourself.'),
                )
              }
            >
              Copy
            </button>
          </div>
          <p role="status">{copied}</p>
          <button type="button" class="quiet" onClick={() => setSecret(null)}>
            I have stored it
          </button>
        </div>
      ) : null}
      <form
        class="panel"
        onSubmit={(event) => {
          event.preventDefault();
          void create();
        }}
      >
        <h2>New key</h2>
        <TextField
          id="key-name"
          label="Key name"
          required
          maxLength={64}
          placeholder="Shop sync"
          value={name}
          onValue={setName}
          hint={
            full
              ? `You have ${MAX_ACTIVE} active keys, the most an account can have: revoke one you no longer use to make another.`
              : `${active} of ${MAX_ACTIVE} active keys.`
          }
        />
        <ErrorNote error={createError} />
        <button type="submit" disabled={creating}>
          Create key
        </button>
      </form>
      <ErrorNote error={revokeError} />
      {keys.length ? (
        <DataTable
          label="Keys table"
          caption="Your keys"
          columns={['Name', 'Starts with', 'Created', 'Last used', 'State', 'Actions']}
          hidden={['Actions']}
        >
          {keys.map((key) => (
            <tr key={key.id}>
              <td>{key.name}</td>
              <td>
                <code>{key.prefix}…</code>
              </td>
              <td>{formatDate(key.createdAt)}</td>
              <td>{key.lastUsedAt ? formatDate(key.lastUsedAt) : 'never'}</td>
              <td>{key.state === 'revoked' ? `revoked ${formatDate(key.revokedAt)}` : 'active'}</td>
              <td>
                {key.state !== 'active' ? null : confirming === key.id ? (
                  <span role="group" aria-label={`Confirm revoking ${key.name}`}>
                    <span>Scripts using it stop working at once. </span>
                    <button type="button" class="danger" onClick={() => void revoke(key.id)}>
                      Revoke {key.name} now
                    </button>{' '}
                    <button type="button" class="quiet" onClick={() => setConfirming(null)}>
                      Keep
                    </button>
                  </span>
                ) : (
                  <button
                    type="button"
                    class="secondary"
                    aria-label={`Revoke`}
                    aria-describedby={`key-${key.id}`}
                    onClick={() => setConfirming(key.id)}
                  >
                    Revoke
                  </button>
                )}
                <span id={`key-${key.id}`} class="sr-only">
                  {key.name}
                </span>
              </td>
            </tr>
          ))}
        </DataTable>
      ) : null}
    </section>
  );
}
