// Minimal ambient declaration for snarkjs 0.7.6 (ships no types). Only src/prover/engine/snark.ts
// imports snarkjs; it narrows the values it uses to its own typed wrappers.
declare module 'snarkjs' {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const groth16: any, powersOfTau: any, r1cs: any, wtns: any, zKey: any, curves: any;
  export { groth16, powersOfTau, r1cs, wtns, zKey, curves };
}
