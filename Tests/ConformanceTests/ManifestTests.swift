import Foundation
import Testing
import Crypto
import JSONDocument

/// `Fixtures/MANIFEST.json` pins the kit: the Spec version it targets and the SHA-256 of every
/// fixture file (rewritten on purpose by `scripts/update-manifest`).
@Suite("Conformance kit manifest")
struct ManifestTests {
    static func manifest() throws -> JSONObject {
        try #require(try Fixtures.json("MANIFEST.json").objectValue)
    }

    /// Every regular file under `Fixtures/`, relative to it, except the manifest.
    static func fixtureFiles() -> [String] {
        let enumerator = FileManager.default.enumerator(at: Fixtures.root, includingPropertiesForKeys: [.isRegularFileKey, .isSymbolicLinkKey])
        var result: [String] = []
        let prefix = Fixtures.root.standardizedFileURL.path + "/"
        while let url = enumerator?.nextObject() as? URL {
            let values = try? url.resourceValues(forKeys: [.isRegularFileKey, .isSymbolicLinkKey])
            guard values?.isRegularFile == true, values?.isSymbolicLink != true else { continue }
            let relative = String(url.standardizedFileURL.path.dropFirst(prefix.count))
            if relative != "MANIFEST.json" { result.append(relative) }
        }
        return result.sorted()
    }

    @Test("the manifest names the Spec version of Spec/README.md")
    func specVersion() throws {
        let readme = try String(contentsOf: Fixtures.root.deletingLastPathComponent().appendingPathComponent("Spec/README.md"), encoding: .utf8)
        let version = try #require(try Self.manifest()["spec"]?.stringValue)
        #expect(readme.contains("**Spec version: \(version) (draft).**"))
        #expect(try Self.manifest()["kit"]?.stringValue == "1.8.0")
    }

    @Test("every fixture file is listed with its SHA-256, and every listed file exists")
    func hashes() throws {
        let listed = try #require(try Self.manifest()["files"]?.objectValue)
        let present = Self.fixtureFiles()
        #expect(present.count > 400)
        #expect(
            Set(listed.keys) == Set(present),
            "unlisted: \(Set(present).subtracting(listed.keys).sorted().prefix(5)); missing: \(Set(listed.keys).subtracting(present).sorted().prefix(5))")
        for path in present {
            let digest = SHA256.hash(data: try Data(contentsOf: Fixtures.url(path))).map { String(format: "%02x", $0) }.joined()
            #expect(listed[path]?.stringValue == digest, "\(path): changed without scripts/update-manifest")
        }
    }
}
