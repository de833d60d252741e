/** getLatestNonVotingSignatures: newest stored (non-vote) transactions with their error; no cursor in the result. */
import { encodeSignatureWithError, withContext } from '../resultEncoding.ts';
import { defineMethod } from './lib/define.ts';
import { pageParams, signaturePage } from './lib/signatures.ts';

/** `getLatestNonVotingSignatures` definition (params schema, handler); semantics in the module comment. */
export const getLatestNonVotingSignatures = defineMethod({
  name: 'getLatestNonVotingSignatures',
  summary: 'Latest non-vote transactions (with error), no cursor in the result',
  params: pageParams,
  async handler(ctx, p) {
    const { slot, rows } = await signaturePage(ctx, { kind: 'latest', compressionOnly: false }, p);
    return withContext(slot, { items: rows.map(encodeSignatureWithError) });
  },
});
