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
        let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            let text = try String(contentsOf: url, encoding: .utf8)
            let regex = try Regex(#"Self\("([a-z0-9]+\.[a-z0-9-]+)"\)"#)
            for match in text.matches(of: regex) {
                if let code = match.output[1].substring { codes.insert(String(code)) }
            }
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
