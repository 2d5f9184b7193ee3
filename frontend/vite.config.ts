/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// EB_API_URL is the control plane the dev server and `vite preview` proxy /api to.
const api = process.env.EB_API_URL ?? 'http://127.0.0.1:8080';
// '/api/', not '/api': the console's own /api-destinations page must not be proxied.
const proxy = { '/api/': { target: api, changeOrigin: false } };

export default defineConfig({
  plugins: [react()],
  server: { proxy },
  preview: { proxy },
  build: {
    outDir: 'dist',
    chunkSizeWarningLimit: 1200,
  },
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
  },
});
