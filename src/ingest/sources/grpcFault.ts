/**
 * Why a gRPC subscription ended (grpc.ts's module comment lists the reasons), apart from grpc.ts, so
 * that live.ts and the metrics name them without loading the Yellowstone client (@grpc/grpc-js and
 * its protobuf codecs), which only a daemon following gRPC needs.
 */
/** Why a gRPC subscription was given up (module comment). */
export type GrpcFaultReason =
  | 'connect'
  | 'replay-unavailable'
  | 'stream-error'
  | 'stream-closed'
  | 'silence'
  | 'gap'
  | 'fork'
  | 'late-transaction'
  | 'lagging'
  | 'decode'
  | 'backlog';

/** Every {@link GrpcFaultReason}, for metrics that list them all. */
export const GRPC_FAULT_REASONS: readonly GrpcFaultReason[] = [
  'connect', 'replay-unavailable', 'stream-error', 'stream-closed', 'silence', 'gap', 'fork', 'late-transaction', 'lagging', 'decode', 'backlog',
];

/** The end of a gRPC subscription that may have lost data: the caller reads on over RPC. */
export class GrpcSourceFault extends Error {
  override readonly name = 'GrpcSourceFault';
  constructor(
    readonly reason: GrpcFaultReason,
    message: string,
    /** The slot concerned, when there is one (the block that did not connect, the replay start, …). */
    readonly slot: number | null = null,
  ) {
    super(`${reason}: ${message}`);
  }
}
