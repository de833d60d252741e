pragma circom 2.0.0;

include "merkle.circom";

// v1 indexed leaf (spec prover.md §1.1 LegacyLeafHashGadget, L:prover/server/prover/v1/legacy_gadgets.go):
// asserts low < value < high (248-bit range checks) and outputs Poseidon3(low, nextIndex, high).
template LegacyLeafHash() {
    signal input low;
    signal input value;
    signal input high;
    signal input nextIndex;
    signal output leaf;

    component lowLtValue = AssertIsLess(248);
    lowLtValue.a <== low;
    lowLtValue.b <== value;
    component valueLtHigh = AssertIsLess(248);
    valueLtHigh.a <== value;
    valueLtHigh.b <== high;

    component h = Poseidon(3);
    h.inputs[0] <== low;
    h.inputs[1] <== nextIndex;
    h.inputs[2] <== high;
    leaf <== h.out;
}

// v1 non-inclusion (spec prover.md §1.3, L:prover/server/prover/v1/non_inclusion_circuit.go).
// Proves that the low element (leafLowerRangeValue, nextIndex, leafHigherRangeValue) is the leaf at
// pathIndex of the tree with the given root, and that value lies strictly inside its range.
// Public vector (declaration order): [roots[0..M), values[0..M)].
template NonInclusion(H, M) {
    signal input roots[M];
    signal input values[M];
    signal input leafLowerRangeValue[M];
    signal input leafHigherRangeValue[M];
    signal input nextIndex[M];
    signal input pathIndex[M];
    signal input pathElements[M][H];

    component lh[M];
    component mr[M];
    for (var i = 0; i < M; i++) {
        lh[i] = LegacyLeafHash();
        lh[i].low <== leafLowerRangeValue[i];
        lh[i].value <== values[i];
        lh[i].high <== leafHigherRangeValue[i];
        lh[i].nextIndex <== nextIndex[i];

        mr[i] = MerkleRoot(H);
        mr[i].leaf <== lh[i].leaf;
        mr[i].pathIndex <== pathIndex[i];
        for (var j = 0; j < H; j++) {
            mr[i].pathElements[j] <== pathElements[i][j];
        }
        roots[i] === mr[i].root;
    }
}
