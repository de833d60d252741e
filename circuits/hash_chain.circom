pragma circom 2.0.0;

// Two-input hash chain of Light's v2 circuits (spec prover.md §1.6,
// L:prover/server/prover/v2/batch_circuit_helpers.go::TwoInputsHashChain,
// L:program-libs/hasher/src/hash_chain.rs::create_two_inputs_hash_chain).
include "circomlib/circuits/poseidon.circom";

// out = Poseidon2(a[0], b[0]), then out = Poseidon3(out, a[i], b[i]) for i = 1..N-1.
// N ≥ 1 (the reference panics on an empty first list). Cost: 240 + 261·(N−1) constraints.
template TwoInputsHashChain(N) {
    signal input a[N];
    signal input b[N];
    signal output out;

    component first = Poseidon(2);
    first.inputs[0] <== a[0];
    first.inputs[1] <== b[0];

    component next[N];
    signal h[N];
    h[0] <== first.out;
    for (var i = 1; i < N; i++) {
        next[i] = Poseidon(3);
        next[i].inputs[0] <== h[i - 1];
        next[i].inputs[1] <== a[i];
        next[i].inputs[2] <== b[i];
        h[i] <== next[i].out;
    }
    out <== h[N - 1];
}
