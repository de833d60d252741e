#!/usr/bin/env node
// Entry point of the `refract` CLI. Runs the sources compiled into .build/ (bin/precompile.mjs: brought
// up to date with src/ at each start, no loader hooks), or, where that cannot be done or tsx is told not
// to cache (TSX_DISABLE_CACHE), registers the TypeScript loader (tsx) and runs src/cli.ts.
import { pathToFileURL } from 'node:url';
import { precompiled } from './precompile.mjs';

const cli = process.env.TSX_DISABLE_CACHE ? null : precompiled();
if (cli) {
  process.setSourceMapsEnabled(true);
  await import(pathToFileURL(cli).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli.ts');
}
