#!/usr/bin/env node
// Entry point of the `refract` CLI: registers the TypeScript loader (tsx) and runs src/cli.ts.
import { register } from 'tsx/esm/api';
register();
await import('../src/cli.ts');
