pragma circom 2.0.0;

// Merkle-root gadget of Light's v1 prover (spec prover.md §1.1, L:prover/server/prover/common/circuit_utils.go).
// Included from the circomlib npm package: compile with `-l <node_modules>`.
include "circomlib/circuits/poseidon.circom";
include "circomlib/circuits/bitify.circom";

// Folds a leaf up a height-H tree.
//   leaf          the leaf value (used as given)
//   pathIndex     the leaf index; Num2Bits(H) forces pathIndex < 2^H and gives its bits LSB first
//   pathElements  siblings bottom-up: pathElements[0] is the sibling at the leaf level
//   root          the folded root (output)
// Per level: bit 0 → Poseidon(cur, sib); bit 1 → Poseidon(sib, cur), written with one
// multiplication: m = bit*(sib-cur); Poseidon(cur+m, sib-m).
template MerkleRoot(H) {
    signal input leaf;
    signal input pathIndex;
    signal input pathElements[H];
    signal output root;

    component bits = Num2Bits(H);
    bits.in <== pathIndex;

    component hashers[H];
    signal cur[H + 1];
    signal m[H];
    cur[0] <== leaf;
    for (var i = 0; i < H; i++) {
        m[i] <== bits.out[i] * (pathElements[i] - cur[i]);
        hashers[i] = Poseidon(2);
        hashers[i].inputs[0] <== cur[i] + m[i];
        hashers[i].inputs[1] <== pathElements[i] - m[i];
        cur[i + 1] <== hashers[i].out;
    }
    root <== cur[H];
}

// Asserts a < b for a, b < 2^n, as gnark's AssertIsLess: Num2Bits(n)(a + 2^n - b).
// This forces b - a in [1, 2^n]; nothing else bounds a or b (spec §1.1).
template AssertIsLess(n) {
    signal input a;
    signal input b;
    component bits = Num2Bits(n);
    bits.in <== a + (1 << n) - b;
}
