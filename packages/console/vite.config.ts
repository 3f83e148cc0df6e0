import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

// Served by the admin service under /console/; hashed names let it cache assets for a year.
export default defineConfig({
  base: '/console/',
  plugins: [preact()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    // The CSP forbids inline scripts and styles, so nothing may be inlined as a data: module.
    assetsInlineLimit: 0,
    target: 'es2022',
  },
});
