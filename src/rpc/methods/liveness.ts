/** liveness: `null` while the server answers requests (Photon's `liveness`; also `GET /liveness`). Params are ignored. */
import { z } from 'zod';
import { defineMethod } from './lib/define.ts';

/** `liveness` definition (params schema, handler); semantics in the module comment. */
export const liveness = defineMethod({
  name: 'liveness',
  summary: 'null while the server answers (liveness probe; also GET /liveness)',
  snapshot: false,
  params: z.unknown().meta({ description: 'Ignored' }),
  handler: () => null,
});
