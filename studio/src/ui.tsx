// Small pieces every page uses: links that stay in the app, errors shown where they happen, dates.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { describeError, type Shown } from './api.ts';

const BASE = '/studio';
const listeners = new Set<() => void>();

export function navigate(path: string): void {
  history.pushState(null, '', `${BASE}${path}`);
  for (const listener of listeners) listener();
}

/** The studio path of the page (`/batches/b_1`), following the address bar. */
export function usePath(): string {
  const read = () => location.pathname.slice(BASE.length) || '/';
  const [path, setPath] = useState(read);
  useEffect(() => {
    const update = () => setPath(read());
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return path;
}

export function Link(props: { to: string; children: ComponentChildren; 'aria-current'?: 'page' }) {
  const { to, children } = props;
  return (
    <a
      aria-current={props['aria-current']}
      href={`${BASE}${to}`}
      onClick={(event) => {
        if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
        event.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

/** An error next to what caused it: read out at once (role=alert), never silent. */
export function ErrorNote({ error, id }: { error: Shown | null | undefined; id?: string }) {
  if (!error) return null;
  return (
    <p class="error" role="alert" id={id}>
      {error.message}
      {error.code ? <span class="code"> ({error.code})</span> : null}
    </p>
  );
}

/**
 * Runs an action and keeps its error for display: `[run, error, busy]`. What the user typed is never reset
 * on a failure, so a refused request loses nothing.
 */
export function useAction<A extends unknown[]>(
  action: (...args: A) => Promise<void>,
): [(...args: A) => Promise<void>, Shown | null, boolean] {
  const [error, setError] = useState<Shown | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (...args: A) => {
    setBusy(true);
    setError(null);
    try {
      await action(...args);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return [run, error, busy];
}

export function formatAge(ms: number, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  return `${span(s)} ago`;
}

export function span(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} days`;
}

export function formatDate(value: number | string | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return new Date(value).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** A table that scrolls sideways on a narrow screen: a labelled region that takes focus, so keys scroll it too. */
function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}

/** A table with a caption for screen readers and column headers (an empty-looking header names itself for them). */
export function DataTable(props: {
  label: string;
  caption: string;
  columns: string[];
  hidden?: string[];
  children: ComponentChildren;
}) {
  return (
    <TableWrap label={props.label}>
      <table>
        <caption class="sr-only">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th scope="col" key={column}>
                {props.hidden?.includes(column) ? <span class="sr-only">{column}</span> : column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </TableWrap>
  );
}

/** A labelled text field (or `rows`: a text area), with an optional hint read with it. */
export function TextField(props: {
  id: string;
  label: string;
  value: string;
  onValue: (value: string) => void;
  hint?: string;
  rows?: number;
  type?: 'text' | 'email' | 'password' | 'number';
  required?: boolean;
  maxLength?: number;
  min?: number;
  max?: number;
  placeholder?: string;
  autocomplete?: string;
  autofocus?: boolean;
}) {
  const { id, label, value, onValue, hint, rows, type = 'text', ...rest } = props;
  const described = hint ? `${id}-hint` : undefined;
  return (
    <>
      <label for={id}>{label}</label>
      {rows ? (
        <textarea
          id={id}
          rows={rows}
          value={value}
          placeholder={rest.placeholder}
          aria-describedby={described}
          onInput={(e) => onValue(e.currentTarget.value)}
        />
      ) : (
        <input
          id={id}
          type={type as 'text'}
          {...rest}
          value={value}
          aria-describedby={described}
          onInput={(e) => onValue(e.currentTarget.value)}
        />
      )}
      {hint ? (
        <p id={described} class="hint">
          {hint}
        </p>
      ) : null}
    </>
  );
}
