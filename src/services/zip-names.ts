// The ZIP's file names come from @matte/client (the studio previews them with the same code); here a
// pattern the seller got wrong becomes 400 VALIDATION at querystring/pattern.
import * as names from '@matte/client/zip-names';
import { AppError } from '../errors.ts';

export { baseName, fillPattern, type TokenValues } from '@matte/client/zip-names';

function validation<T>(run: () => T): T {
  try {
    return run();
  } catch (err) {
    if (!(err instanceof names.PatternError)) throw err;
    throw new AppError('VALIDATION', err.message, { errors: [{ path: 'querystring/pattern', message: err.message }] });
  }
}

export const parsePattern = (pattern: string) => validation(() => names.parsePattern(pattern));

export class UniqueNames {
  private readonly names: names.UniqueNames;
  constructor(strict: boolean) {
    this.names = new names.UniqueNames(strict);
  }
  take(folder: string, name: string, ext: string): string {
    return validation(() => this.names.take(folder, name, ext));
  }
}
