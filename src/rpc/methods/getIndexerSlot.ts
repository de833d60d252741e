/** getIndexerSlot: the last indexed slot as a bare JSON number (no context). Params are ignored. */
import { z } from 'zod';
import { u64 } from '../resultEncoding.ts';
import { defineMethod } from './lib/define.ts';
import { requireSlot } from './lib/shared.ts';

/** `getIndexerSlot` definition (params schema, handler); semantics in the module comment. */
export const getIndexerSlot = defineMethod({
  name: 'getIndexerSlot',
  summary: 'Last indexed slot (bare number)',
  params: z.unknown().meta({ description: 'Ignored' }),
  handler: async (ctx) => u64(await requireSlot(ctx)),
});
