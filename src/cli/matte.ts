// bin/matte: runs main.ts's command on the process's arguments. Bad input prints one line and exits 2; a
// failure of our own exits 1.
import { AppError, errorCode } from '../errors.ts';
import { main } from './main.ts';

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const userError = err instanceof AppError ? err.status < 500 : errorCode(err)?.startsWith('ERR_PARSE_ARGS');
    process.stderr.write(`matte: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(userError ? 2 : 1);
  },
);
