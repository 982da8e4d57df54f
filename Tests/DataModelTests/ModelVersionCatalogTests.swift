import Foundation
import Testing
import JSONDocument
@testable import DataModel

/// The forms of `modelVersion` and the check against known versions (Spec/model.md 8).
@Suite("Model version catalog")
struct ModelVersionCatalogTests {
    static let hashes: [String: [UInt8]] = [
        "Parent": Array(0..<32), "Child": Array(100..<132), "child": [UInt8](repeating: 0xFF, count: 32),
    ]

    static func plist(_ hashes: [String: Any]) throws -> String {
        let data = try PropertyListSerialization.data(fromPropertyList: hashes, format: .xml, options: 0)
        return String(decoding: data, as: UTF8.self)
    }

    @Test("the two NSData description styles give the texts published for one 32-byte device token, and a short value whole")
    func descriptionStyles() throws {
        // The same token printed on iOS 12 and on iOS 13 (NSHipster, "Apple Push Notification
        // Device Tokens"); and a 20-byte value as macOS 10.15+ logs print it.
        let token: [UInt8] = try #require(hexBytes("965b251c6cb1926de3cb366fdfb16ddde6b9086a8a3cac9e5f857679376eab7c"))
        #expect(DataDescriptionStyle.grouped.text(token) == "<965b251c 6cb1926d e3cb366f dfb16ddd e6b9086a 8a3cac9e 5f857679 376eab7c>")
        #expect(
            DataDescriptionStyle.lengthPrefixed.text(token) == "{length = 32, bytes = 0x965b251c 6cb1926d e3cb366f dfb16ddd ... 5f857679 376eab7c }")
        let short: [UInt8] = try #require(hexBytes("d43e30f896b843326e57247e752f9c5d2cc744e9"))
        #expect(DataDescriptionStyle.lengthPrefixed.text(short) == "{length = 20, bytes = 0xd43e30f896b843326e57247e752f9c5d2cc744e9}")
        #expect(DataDescriptionStyle.grouped.text([0xAB, 0x01, 0x02]) == "<ab0102>")
        #expect(DataDescriptionStyle.grouped.text([]) == "<>")
    }

    @Test("the grouped style is what this platform's Foundation writes")
    func groupedIsCorelibs() {
        let bytes: [UInt8] = (0..<37).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 5) }
        #expect(DataDescriptionStyle.grouped.text(bytes) == (Data(bytes) as NSData).description)
    }

    @Test("md5 model versions equal the values scripts/coredata-expected.py computes (names in UTF-16 order, Child before Parent before child)")
    func md5Values() {
        #expect(ModelVersionCatalog.md5ModelVersion(Self.hashes, style: .grouped) == "md5f0aea8ff103c1b8105de5419d149e82f")
        #expect(ModelVersionCatalog.md5ModelVersion(Self.hashes, style: .lengthPrefixed) == "md5ede1f50f1f488dd0e8d6349a12e10e48")
    }

    @Test("each form: matched, unknown, or not checked; the style that matched is reported")
    func forms() throws {
        let catalog = ModelVersionCatalog([
            KnownModelVersion(name: "V1", source: "test", entityHashes: Self.hashes),
            KnownModelVersion(name: "xc", source: "test", modelHash: "sha256:" + String(repeating: "a", count: 64)),
        ])
        for style in DataDescriptionStyle.allCases {
            let value = ModelVersionCatalog.md5ModelVersion(Self.hashes, style: style)
            #expect(catalog.check(value) == ModelVersionCheck(form: .md5, checked: true, matchedVersion: "V1", descriptionStyle: style))
            #expect(catalog.check(value.uppercased().replacingOccurrences(of: "MD5", with: "md5")).descriptionStyle == style)
        }
        #expect(catalog.check("md5" + String(repeating: "0", count: 32)).isUnknown)
        #expect(catalog.check("sha256:" + String(repeating: "a", count: 64)).matchedVersion == "xc")
        #expect(catalog.check("sha256:" + String(repeating: "b", count: 64)).isUnknown)
        #expect(catalog.check("Model 2") == ModelVersionCheck(form: .other, checked: false))
        #expect(catalog.check("md5abc") == ModelVersionCheck(form: .other, checked: false))

        // A property list matches by dictionary equality, whatever its layout or key order.
        let text = try Self.plist(Self.hashes.mapValues { Data($0) })
        #expect(catalog.check(text) == ModelVersionCheck(form: .propertyList, checked: true, matchedVersion: "V1"))
        let reordered = text.replacingOccurrences(of: "\t", with: "  ")
        #expect(catalog.check("\n" + reordered).matchedVersion == "V1")
        var changed = Self.hashes
        changed["Parent"]?[0] = 0xEE
        #expect(catalog.check(try Self.plist(changed.mapValues { Data($0) })).isUnknown)
        var missing = Self.hashes
        missing["child"] = nil
        #expect(catalog.check(try Self.plist(missing.mapValues { Data($0) })).isUnknown)
        // A value that is not data equals no version; text that is not a dictionary is not checked.
        #expect(catalog.check(try Self.plist(["Parent": "0001"])).isUnknown)
        #expect(catalog.check("<plist version=\"1.0\"><string>x</string></plist>") == ModelVersionCheck(form: .other, checked: false))
        #expect(catalog.check("<plist><dict><key>A</key>") == ModelVersionCheck(form: .other, checked: false))
    }

    @Test("a catalog of only an xcdatamodel's hash checks sha256 values and nothing else, as before")
    func onlyModelHash() throws {
        let catalog = ModelVersionCatalog([KnownModelVersion(name: "xc", source: "test", modelHash: "sha256:" + String(repeating: "a", count: 64))])
        #expect(!catalog.check(ModelVersionCatalog.md5ModelVersion(Self.hashes, style: .grouped)).checked)
        #expect(!catalog.check(try Self.plist(Self.hashes.mapValues { Data($0) })).checked)
        #expect(catalog.check("sha256:0").isUnknown)
        #expect(ModelVersionCatalog.forCheck(model: nil, known: nil) == nil)
    }

    @Test("hostile property lists are not handed to Foundation: declared entities, deep nesting, shared binary references, size")
    func hostilePropertyLists() throws {
        let laughs = """
            <?xml version="1.0"?><!DOCTYPE plist [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>
            <plist version="1.0"><dict><key>Parent</key><string>&b;</string></dict></plist>
            """
        #expect(PropertyListGuard.problem(Array(laughs.utf8), limit: 1 << 20) == "a property list that declares entities")
        let deep = "<plist>" + String(repeating: "<array>", count: 65) + String(repeating: "</array>", count: 65) + "</plist>"
        #expect(PropertyListGuard.problem(Array(deep.utf8), limit: 1 << 20) == "a property list nested deeper than 64")
        let hidden = "<plist><!-- </array> -->" + String(repeating: "<array>", count: 64) + String(repeating: "</array>", count: 64) + "</plist>"
        #expect(PropertyListGuard.problem(Array(hidden.utf8), limit: 1 << 20) == nil)
        let catalog = ModelVersionCatalog([KnownModelVersion(name: "V1", source: "test", entityHashes: Self.hashes)])
        #expect(catalog.check(laughs) == ModelVersionCheck(form: .other, checked: false))
        #expect(PropertyListGuard.problem([UInt8](repeating: 0x20, count: 11), limit: 10) != nil)
        // An array holding a string and an array that holds the same string: a shared reference.
        var shared: [UInt8] = Array("bplist00".utf8)
        shared += [0xA2, 1, 2]  // object 0 at 8: [object 1, object 2]
        shared += [0xA1, 2]  // object 1 at 11: [object 2]
        shared += [0x51, 0x61]  // object 2 at 13: "a"
        shared += [8, 11, 13]  // the offset table, at 15
        shared += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 3] + [0, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 0, 0, 0, 0, 15]
        #expect(PropertyListGuard.problem(shared, limit: 1 << 20)?.contains("twice") == true)
    }

    @Test("a compiled model gives every version of its VersionInfo.plist, or the one a .mom or --model-version names")
    func compiledModel() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("momd-\(UUID().uuidString)/App.momd")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let info: [String: Any] = [
            "NSManagedObjectModel_CurrentVersionName": "App 2",
            "NSManagedObjectModel_VersionHashes": [
                "App": Self.hashes.mapValues { Data($0) }, "App 2": ["Parent": Data(repeating: 7, count: 32)],
            ],
        ]
        try PropertyListSerialization.data(fromPropertyList: info, format: .binary, options: 0).write(to: folder.appendingPathComponent("VersionInfo.plist"))
        try Data("not readable here".utf8).write(to: folder.appendingPathComponent("App 2.mom"))
        let all = try CompiledModel.versions(at: folder.path)
        #expect(all.map(\.name) == ["App", "App 2"])
        #expect(all.first?.entityHashes == Self.hashes)
        #expect(try CompiledModel.versions(at: folder.appendingPathComponent("App 2.mom").path).map(\.name) == ["App 2"])
        #expect(try CompiledModel.versions(at: folder.path, version: "App").map(\.name) == ["App"])
        do {
            _ = try CompiledModel.versions(at: folder.path, version: "App 3")
            Issue.record("a version that VersionInfo.plist does not name was read")
        } catch {
            #expect(error.code == .dataModelVersionNotFound)
        }
        try FileManager.default.removeItem(at: folder.appendingPathComponent("VersionInfo.plist"))
        do {
            _ = try CompiledModel.versions(at: folder.appendingPathComponent("App 2.mom").path)
            Issue.record("a .mom without VersionInfo.plist was read")
        } catch {
            #expect(error.code == .dataModelUnreadable)
        }
        #expect(CompiledModel.looksLikeCompiledModel(folder.path + "/") && !CompiledModel.looksLikeCompiledModel("Model.xcdatamodeld"))
    }

    func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        return stride(from: 0, to: digits.count, by: 2).compactMap { UInt8(String(decoding: digits[$0..<($0 + 2)], as: UTF8.self), radix: 16) }
    }
}
