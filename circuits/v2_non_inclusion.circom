pragma circom 2.0.0;

include "merkle.circom";
include "hash_chain.circom";

// v2 indexed leaf (spec prover.md §1.1 LeafHashGadget): asserts low < value < high (248-bit range
// checks, as v1) and outputs Poseidon2(low, high); no next index.
template LeafHashV2() {
    signal input low;
    signal input value;
    signal input high;
    signal output leaf;

    component lowLtValue = AssertIsLess(248);
    lowLtValue.a <== low;
    lowLtValue.b <== value;
    component valueLtHigh = AssertIsLess(248);
    valueLtHigh.a <== value;
    valueLtHigh.b <== high;

    component h = Poseidon(2);
    h.inputs[0] <== low;
    h.inputs[1] <== high;
    leaf <== h.out;
}

// Non-inclusion of M values in height-H (40) address trees with v2 leaves (L:prover/server/prover/
// common/circuit_utils.go::NonInclusionProof as used by v2): the low element (leafLowerRangeValue,
// leafHigherRangeValue) is the leaf at pathIndex of the tree with the given root, and value lies
// strictly inside its range. No public inputs of its own.
template NonInclusionProofV2(H, M) {
    signal input roots[M];
    signal input values[M];
    signal input leafLowerRangeValue[M];
    signal input leafHigherRangeValue[M];
    signal input pathIndex[M];
    signal input pathElements[M][H];

    component lh[M];
    component mr[M];
    for (var i = 0; i < M; i++) {
        lh[i] = LeafHashV2();
        lh[i].low <== leafLowerRangeValue[i];
        lh[i].value <== values[i];
        lh[i].high <== leafHigherRangeValue[i];

        mr[i] = MerkleRoot(H);
        mr[i].leaf <== lh[i].leaf;
        mr[i].pathIndex <== pathIndex[i];
        for (var j = 0; j < H; j++) {
            mr[i].pathElements[j] <== pathElements[i][j];
        }
        roots[i] === mr[i].root;
    }
}

// v2 non-inclusion (spec prover.md §1.6, L:prover/server/prover/v2/non_inclusion_circuit.go):
// publicInputHash = TwoInputsHashChain(roots, values). Public vector: [publicInputHash].
template NonInclusionV2(H, M) {
    signal input publicInputHash;
    signal input roots[M];
    signal input values[M];
    signal input leafLowerRangeValue[M];
    signal input leafHigherRangeValue[M];
    signal input pathIndex[M];
    signal input pathElements[M][H];

    component chain = TwoInputsHashChain(M);
    chain.a <== roots;
    chain.b <== values;
    publicInputHash === chain.out;

    component non = NonInclusionProofV2(H, M);
    non.roots <== roots;
    non.values <== values;
    non.leafLowerRangeValue <== leafLowerRangeValue;
    non.leafHigherRangeValue <== leafHigherRangeValue;
    non.pathIndex <== pathIndex;
    non.pathElements <== pathElements;
}
