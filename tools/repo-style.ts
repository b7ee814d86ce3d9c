// A generated file (a docs page, the client's types, a calibration) formatted as the repository formats it
// (Prettier, with the file's own settings), so `npm run check` stays clean after a script writes it.
import * as prettier from 'prettier';

export async function inRepoStyle(file: string, text: string): Promise<string> {
  const options = (await prettier.resolveConfig(file)) ?? {};
  return prettier.format(text, { ...options, filepath: file });
}
