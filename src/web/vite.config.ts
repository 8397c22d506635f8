import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const here = fileURLToPath(new URL('.', import.meta.url));
// Where `npm run dev:web` sends API calls: a running service (npm start), default port 8080.
const target = process.env.COPYTRADE_URL ?? 'http://127.0.0.1:8080';

/** The dashboard: built to dist/web, which src/api/web.ts serves at the root of the base URL. */
export default defineConfig({
  root: here,
  base: '/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../../dist/web', import.meta.url)),
    emptyOutDir: true,
    sourcemap: true,
    chunkSizeWarningLimit: 800,
  },
  server: {
    proxy: Object.fromEntries(
      ['/api', '/app', '/v1', '/openapi.json', '/docs', '/healthz', '/readyz', '/metrics'].map((p) => [
        p,
        { target, changeOrigin: false },
      ]),
    ),
  },
});
