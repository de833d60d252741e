pragma circom 2.0.0;

include "inclusion.circom";
include "v2_non_inclusion.circom";

// v2 combined (spec prover.md §1.6, L:prover/server/prover/v2/combined_circuit.go): inclusion of N
// accounts (state tree height H1 = 32) and non-inclusion of M addresses (address tree height
// H2 = 40), both sides non-empty, with
//   publicInputHash = Poseidon2(TwoInputsHashChain(roots, leaves), TwoInputsHashChain(addrRoots, values)).
// (A request with one side empty is an inclusion or non-inclusion request, whose hash is that
// side's chain alone.) The address-side private inputs carry an `addr` prefix where names clash.
// Public vector: [publicInputHash].
template CombinedV2(H1, H2, N, M) {
    signal input publicInputHash;
    signal input roots[N];
    signal input leaves[N];
    signal input addrRoots[M];
    signal input values[M];
    signal input pathIndices[N];
    signal input pathElements[N][H1];
    signal input leafLowerRangeValue[M];
    signal input leafHigherRangeValue[M];
    signal input addrPathIndex[M];
    signal input addrPathElements[M][H2];

    component incChain = TwoInputsHashChain(N);
    incChain.a <== roots;
    incChain.b <== leaves;
    component nonChain = TwoInputsHashChain(M);
    nonChain.a <== addrRoots;
    nonChain.b <== values;
    component both = Poseidon(2);
    both.inputs[0] <== incChain.out;
    both.inputs[1] <== nonChain.out;
    publicInputHash === both.out;

    component inc = Inclusion(H1, N);
    inc.roots <== roots;
    inc.leaves <== leaves;
    inc.pathIndices <== pathIndices;
    inc.pathElements <== pathElements;

    component non = NonInclusionProofV2(H2, M);
    non.roots <== addrRoots;
    non.values <== values;
    non.leafLowerRangeValue <== leafLowerRangeValue;
    non.leafHigherRangeValue <== leafHigherRangeValue;
    non.pathIndex <== addrPathIndex;
    non.pathElements <== addrPathElements;
}
