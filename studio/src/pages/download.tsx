// The batch's ZIP: a name pattern, a format and extra presets, with the first file names previewed by the
// same code the server names the entries with (@matte/client's zip-names).
import { useState } from 'preact/hooks';
import {
  baseName,
  extensionOf,
  fillPattern,
  parsePattern,
  PatternError,
  PATTERN_TOKENS,
  UniqueNames,
  type TokenValues,
} from '@matte/client';
import type { FullBatch } from '@matte/client';
import type { Preset } from '../settings.tsx';
import { ErrorNote } from '../ui.tsx';

function previewNames(batch: FullBatch, pattern: string, format: string, count = 5): string[] {
  parsePattern(pattern);
  const finished = batch.items.filter((item) => item.status === 'done');
  const width = String(finished.length).length;
  const date = new Date(batch.createdAt).toISOString().slice(0, 10);
  const names = new UniqueNames(pattern !== '{name}');
  return finished.slice(0, count).map((item, i) => {
    const output = item.meta?.output;
    const values: TokenValues = {
      name: baseName(item.name),
      index: String(1 + i),
      n: String(i + 1).padStart(width, '0'),
      preset: item.settings.presetId,
      w: String(output?.width ?? 0),
      h: String(output?.height ?? 0),
      date,
      sku: '',
    };
    return names.take('', fillPattern(pattern, values), extensionOf(format || output?.format || 'png'));
  });
}

export function DownloadPanel({ batch, presets }: { batch: FullBatch; presets: Preset[] }) {
  const [pattern, setPattern] = useState('{name}');
  const [format, setFormat] = useState('');
  const [extra, setExtra] = useState<string[]>([]);

  let names: string[] = [];
  let problem: { message: string } | null = null;
  try {
    names = previewNames(batch, pattern || '{name}', format);
  } catch (err) {
    if (!(err instanceof PatternError)) throw err;
    problem = { message: err.message };
  }
  const query = new URLSearchParams();
  if (pattern && pattern !== '{name}') query.set('pattern', pattern);
  if (format) query.set('format', format);
  if (extra.length) query.set('presets', extra.join(','));
  const href = `/v1/jobs/${encodeURIComponent(batch.id)}/download${query.size ? `?${query}` : ''}`;
  const finished = batch.counts.done;

  return (
    <div class="panel">
      <h2>Download</h2>
      <div class="fields">
        <label for="pattern">File name pattern</label>
        <input
          id="pattern"
          value={pattern}
          maxLength={80}
          aria-describedby="pattern-hint"
          aria-invalid={problem ? true : undefined}
          onInput={(e) => setPattern(e.currentTarget.value)}
        />
        <p id="pattern-hint" class="hint">
          Tokens: {PATTERN_TOKENS.map((t) => `{${t}}`).join(' ')}
        </p>
        <ErrorNote error={problem} />
        <label for="format">Format</label>
        <select id="format" value={format} onChange={(e) => setFormat(e.currentTarget.value)}>
          <option value="">As rendered</option>
          <option value="png">PNG</option>
          <option value="jpeg">JPEG (on white)</option>
          <option value="webp">WebP</option>
        </select>
      </div>
      <details>
        <summary>Also render for other presets{extra.length ? ` (${extra.length} chosen)` : ''}</summary>
        <fieldset>
          <legend>Also render for (a folder each)</legend>
          <div class="checks">
            {presets.map((preset) => (
              <label key={preset.id}>
                <input
                  type="checkbox"
                  checked={extra.includes(preset.id)}
                  onChange={(e) =>
                    setExtra((old) =>
                      e.currentTarget.checked ? [...old, preset.id] : old.filter((x) => x !== preset.id),
                    )
                  }
                />
                {preset.label}
              </label>
            ))}
          </div>
        </fieldset>
      </details>
      {names.length ? (
        <>
          <h3 id="names-title">First file names</h3>
          <ul aria-labelledby="names-title" class="names">
            {names.map((name) => (
              <li key={name}>
                <code>{name}</code>
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {problem ? (
        <p>Fix the pattern to download.</p>
      ) : (
        <a class="button" href={href} download>
          Download ZIP
        </a>
      )}
      <p class="hint">
        {finished} finished {finished === 1 ? 'photo' : 'photos'}; the ZIP is made as it downloads.
      </p>
    </div>
  );
}
