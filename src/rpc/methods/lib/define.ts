/**
 * The shape of a JSON-RPC method: its name, aliases, one zod schema for params (validation and
 * OpenAPI), and a handler that receives the decoded params and returns the JSON-RPC `result`
 * (already encoded with src/rpc/resultEncoding.ts). Handlers throw `RpcError` for domain failures.
 */
import type { z } from 'zod';
import type { RpcContext } from '../../context.ts';

/** One JSON-RPC method. */
export interface MethodDefinition<S extends z.ZodType = z.ZodType> {
  /** Canonical method name, e.g. `getCompressedAccount`. */
  name: string;
  /** Other names served by the same definition (e.g. `getCompressedAccountBalance`). */
  aliases?: readonly string[];
  /** One line for the OpenAPI document. */
  summary: string;
  /**
   * Run the handler inside `ctx.data.snapshot` (one consistent read snapshot for the context slot and
   * the data). Default true; set false for handlers that wait on Solana or the prover, which should
   * not pin a read transaction meanwhile.
   */
  snapshot?: boolean;
  /** Params schema: input = the JSON `params` value (null when absent), output = decoded params. */
  params: S;
  /** Compute the `result`. May be sync or async. */
  handler(ctx: RpcContext, params: z.output<S>): unknown;
}

/** Identity helper that infers the params type of `handler` from `params`. */
export function defineMethod<S extends z.ZodType>(def: MethodDefinition<S>): MethodDefinition<S> {
  return def;
}
