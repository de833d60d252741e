pragma circom 2.0.0;

include "merkle.circom";

// v1 inclusion (spec prover.md §1.2, L:prover/server/prover/v1/inclusion_circuit.go).
// Public vector (declaration order): [roots[0..N), leaves[0..N)].
template Inclusion(H, N) {
    signal input roots[N];
    signal input leaves[N];
    signal input pathIndices[N];
    signal input pathElements[N][H];

    component mr[N];
    for (var i = 0; i < N; i++) {
        mr[i] = MerkleRoot(H);
        mr[i].leaf <== leaves[i];
        mr[i].pathIndex <== pathIndices[i];
        for (var j = 0; j < H; j++) {
            mr[i].pathElements[j] <== pathElements[i][j];
        }
        roots[i] === mr[i].root;
    }
}
