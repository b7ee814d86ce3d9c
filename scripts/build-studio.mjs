// Builds the studio (studio/ → studio/dist) with Vite. It runs as the root package's `prepare`, so
// `npm install` leaves a built studio and `npm start` serves it. Where Vite is not installed (an install
// without dev dependencies, such as the Docker image's last stage, which copies a build instead), it says
// so and leaves the build alone.
import { URL, fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../studio/', import.meta.url));
let vite;
try {
  vite = await import('vite');
} catch {
  console.log(
    'studio: not built here (Vite is a dev dependency and is not installed); /studio/ serves what was built before',
  );
  process.exit(0);
}
await vite.build({ root, configFile: `${root}vite.config.ts`, logLevel: 'warn' });
console.log('studio: built into studio/dist');
