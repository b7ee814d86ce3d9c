// The studio's build: Preact through esbuild's automatic JSX (no Babel), served by Matte at /studio/.
// `npm install` builds it (the root package's `prepare`), so `npm start` serves it with no third command.
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/studio/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The Content-Security-Policy allows no inline code: every script and style is a file.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    reportCompressedSize: true,
  },
});
