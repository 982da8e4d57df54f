import Foundation
import Testing

/// The Spec must list every error code the code can raise, so that a user who sees a code can
/// look it up and another implementation knows it exists.
@Suite("Spec completeness")
struct SpecCompletenessTests {
    static let packageRoot = Fixtures.root.deletingLastPathComponent()

    /// Every `Self("family.name")` constant declared under Sources/.
    static func declaredCodes() throws -> Set<String> {
        var codes = Set<String>()
        let sources = packageRoot.appendingPathComponent("Sources")
        // Foundation's (ICU's) matcher: Swift's `Regex` took 17 s of CPU over Sources/ in the
        // debug build, this test alone.
        let regex = try NSRegularExpression(pattern: #"Self\("([a-z0-9]+\.[a-z0-9-]+)"\)"#)
        let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            let text = try String(contentsOf: url, encoding: .utf8)
            for groups in regex.allGroups(in: text) { if let code = groups[1] { codes.insert(code) } }
        }
        return codes
    }

    @Test("every error code declared in Sources/ is listed in Spec/README.md")
    func codesDocumented() throws {
        let spec = try String(contentsOf: Self.packageRoot.appendingPathComponent("Spec/README.md"), encoding: .utf8)
        let codes = try Self.declaredCodes()
        #expect(codes.count > 30)
        let missing = codes.filter { !spec.contains("`\($0)`") }.sorted()
        #expect(missing.isEmpty, "codes missing from Spec/README.md: \(missing)")
    }
}

extension NSRegularExpression {
    /// For each match in `text`: the whole match and its capture groups (nil for a group that
    /// took no part).
    func allGroups(in text: String) -> [[String?]] {
        matches(in: text, range: NSRange(text.startIndex..., in: text)).map { match in
            (0..<match.numberOfRanges).map { Range(match.range(at: $0), in: text).map { String(text[$0]) } }
        }
    }

    /// ``allGroups(in:)`` of the first match only, or nil when there is none.
    func firstGroups(in text: String) -> [String?]? {
        guard let match = firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) else { return nil }
        return (0..<match.numberOfRanges).map { Range(match.range(at: $0), in: text).map { String(text[$0]) } }
    }
}
