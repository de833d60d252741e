/**
 * readiness: `null` once the store can be read (Photon's `readiness` runs `SELECT 1`; also
 * `GET /readiness`). Params are ignored. A store that cannot be read is an internal error (500).
 */
import { z } from 'zod';
import { andThen } from './lib/shared.ts';
import { defineMethod } from './lib/define.ts';

/** `readiness` definition (params schema, handler); semantics in the module comment. */
export const readiness = defineMethod({
  name: 'readiness',
  summary: 'null once the store can be read (readiness probe; also GET /readiness)',
  params: z.unknown().meta({ description: 'Ignored' }),
  handler: (ctx) => andThen(ctx.data.getIndexedSlot(), () => null),
});
