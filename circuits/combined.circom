pragma circom 2.0.0;

include "inclusion.circom";
include "non_inclusion.circom";

// v1 combined (spec prover.md §1.4, L:prover/server/prover/v1/combined_circuit.go): inclusion of N
// accounts (state tree height H1) and non-inclusion of M addresses (address tree height H2), side by
// side with nothing shared.
// Public vector (declaration order): [roots[N], leaves[N], addrRoots[M], values[M]].
// The address-side private inputs carry an `addr` prefix where the names would clash.
template Combined(H1, H2, N, M) {
    signal input roots[N];
    signal input leaves[N];
    signal input addrRoots[M];
    signal input values[M];
    signal input pathIndices[N];
    signal input pathElements[N][H1];
    signal input leafLowerRangeValue[M];
    signal input leafHigherRangeValue[M];
    signal input nextIndex[M];
    signal input addrPathIndex[M];
    signal input addrPathElements[M][H2];

    component inc = Inclusion(H1, N);
    inc.roots <== roots;
    inc.leaves <== leaves;
    inc.pathIndices <== pathIndices;
    inc.pathElements <== pathElements;

    component non = NonInclusion(H2, M);
    non.roots <== addrRoots;
    non.values <== values;
    non.leafLowerRangeValue <== leafLowerRangeValue;
    non.leafHigherRangeValue <== leafHigherRangeValue;
    non.nextIndex <== nextIndex;
    non.pathIndex <== addrPathIndex;
    non.pathElements <== addrPathElements;
}
