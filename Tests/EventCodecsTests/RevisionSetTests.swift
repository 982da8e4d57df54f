import Testing
import EnsembleModel

@Suite("Revision sets")
struct RevisionSetTests {
    @Test("comparison treats a missing store as knowing no revision, below revision 0", arguments: [
        ([:], [:], RevisionSet.Ordering.equal),
        (["A": 1], ["A": 1], .equal),
        (["A": 2], ["A": 1], .dominates),
        (["A": 1], ["A": 2], .isDominated),
        (["A": 0], [:], .dominates),
        ([:], ["A": 0], .isDominated),
        (["A": 1, "B": 0], ["A": 1], .dominates),
        (["A": 2], ["A": 1, "B": 0], .concurrent),
        (["A": 1, "B": 2], ["A": 2, "B": 1], .concurrent),
        (["A": 3, "B": 3], ["A": 3, "C": 0], .concurrent),
    ] as [([String: Int64], [String: Int64], RevisionSet.Ordering)])
    func compare(lhs: [String: Int64], rhs: [String: Int64], expected: RevisionSet.Ordering) {
        #expect(RevisionSet(lhs).compare(RevisionSet(rhs)) == expected)
        let mirrored: RevisionSet.Ordering = switch expected {
        case .dominates: .isDominated
        case .isDominated: .dominates
        default: expected
        }
        #expect(RevisionSet(rhs).compare(RevisionSet(lhs)) == mirrored)
    }

    @Test("merging takes the store-wise maximum")
    func merge() {
        let merged = RevisionSet(["A": 3, "B": 1]).merged(with: RevisionSet(["B": 4, "C": 0]))
        #expect(merged == RevisionSet(["A": 3, "B": 4, "C": 0]))
    }

    @Test("identifier sets are sorted by UTF-8 bytes and duplicate-free")
    func identifierSets() {
        #expect(sortedUnique(["b", "a", "B", "é", "a", "z"]) == ["B", "a", "b", "z", "é"])
    }
}
