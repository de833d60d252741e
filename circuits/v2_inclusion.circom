pragma circom 2.0.0;

include "inclusion.circom";
include "hash_chain.circom";

// v2 inclusion (spec prover.md §1.6, L:prover/server/prover/v2/inclusion_circuit.go): the v1
// inclusion statement over a height-H (32) state tree, with roots and leaves private and bound to
// the single public input publicInputHash = TwoInputsHashChain(roots, leaves).
// Public vector: [publicInputHash].
template InclusionV2(H, N) {
    signal input publicInputHash;
    signal input roots[N];
    signal input leaves[N];
    signal input pathIndices[N];
    signal input pathElements[N][H];

    component chain = TwoInputsHashChain(N);
    chain.a <== roots;
    chain.b <== leaves;
    publicInputHash === chain.out;

    component inc = Inclusion(H, N);
    inc.roots <== roots;
    inc.leaves <== leaves;
    inc.pathIndices <== pathIndices;
    inc.pathElements <== pathElements;
}
