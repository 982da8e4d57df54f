import Foundation
import Crypto
import JSONDocument

/// The texts Foundation's `NSData` description has given for the same bytes (Spec/model.md 8.3).
/// The original's `md5` model version hashes a string built with that description, so the same
/// model gives a different `md5` value depending on the OS that wrote the event.
package enum DataDescriptionStyle: String, CaseIterable, Sendable, Hashable {
    /// `<0a1b2c3d 4e5f6a7b ...>`: every byte, a space after every fourth. Apple platforms before
    /// iOS 13 and macOS 10.15, and swift-corelibs-foundation (Linux) to this day.
    case grouped
    /// `{length = 32, bytes = 0x0a1b2c3d 4e5f6a7b 8c9d0e1f 20314253 ... 8899aabb ccddeeff }`:
    /// iOS 13, macOS 10.15 and later; beyond 24 bytes only the first 16 and the last 8 appear.
    case lengthPrefixed = "length-prefixed"

    /// The description of `bytes` in this style.
    package func text(_ bytes: [UInt8]) -> String {
        func groups(_ slice: ArraySlice<UInt8>) -> [String] {
            stride(from: slice.startIndex, to: slice.endIndex, by: 4).map { lowercaseHex(slice[$0..<min($0 + 4, slice.endIndex)]) }
        }
        switch self {
        case .grouped:
            return "<" + groups(bytes[...]).joined(separator: " ") + ">"
        case .lengthPrefixed:
            let prefix = "{length = \(bytes.count), bytes = 0x"
            guard bytes.count > 24 else { return prefix + lowercaseHex(bytes) + "}" }
            let head = groups(bytes[0..<16]).joined(separator: " ")
            let tail = groups(bytes[(bytes.count - 8)...]).joined(separator: " ")
            return prefix + head + " ... " + tail + " }"
        }
    }
}

/// One model version the app knows: its entity version hashes (from a store's metadata or a
/// compiled model) and/or this toolkit's model hash (from an `.xcdatamodel`) (Spec/model.md 8.4).
package struct KnownModelVersion: Sendable, Hashable {
    /// The version's name (`Model_2`), or what stands for it (`Accounts3.sqlite`).
    package var name: String
    /// The file or folder it was read from, as given.
    package var source: String
    /// Entity name -> Apple's entity version hash.
    package var entityHashes: [String: [UInt8]]?
    /// `sha256:...` (Spec/model.md 7).
    package var modelHash: String?

    package init(name: String, source: String, entityHashes: [String: [UInt8]]? = nil, modelHash: String? = nil) {
        self.name = name
        self.source = source
        self.entityHashes = entityHashes
        self.modelHash = modelHash
    }
}

/// The forms of `modelVersion` (Spec/model.md 8.1).
package enum ModelVersionForm: String, Sendable, Hashable {
    case sha256
    case propertyList = "property-list"
    case md5
    /// Anything else; never checked.
    case other
}

/// What the catalog makes of one `modelVersion` value.
package struct ModelVersionCheck: Sendable, Hashable {
    package var form: ModelVersionForm
    /// Whether the catalog knows versions it can compare this form with (Spec/merge.md 5.7).
    package var checked: Bool
    /// The known version it equals.
    package var matchedVersion: String?
    /// For a matched `md5` value: the description style that gave it.
    package var descriptionStyle: DataDescriptionStyle?

    /// Checked and equal to no known version: error 204.
    package var isUnknown: Bool { checked && matchedVersion == nil }
}

/// The model versions an app knows, and the check of an event's `modelVersion` against them that
/// the original framework makes before merging (Spec/model.md 8, Spec/merge.md 5.7).
package struct ModelVersionCatalog: Sendable {
    /// The largest property-list text parsed; longer ones are not checked.
    package static let maximumPropertyListBytes = 16 * 1024 * 1024

    package private(set) var versions: [KnownModelVersion] = []
    /// Every `md5` value a known version gives, in every description style.
    private var md5Values: [String: (version: String, style: DataDescriptionStyle)] = [:]
    private var cache = CheckCache()

    package init(_ versions: [KnownModelVersion] = []) {
        for version in versions { add(version) }
    }

    package mutating func add(_ version: KnownModelVersion) {
        versions.append(version)
        cache = CheckCache()
        guard let hashes = version.entityHashes else { return }
        for style in DataDescriptionStyle.allCases {
            let value = Self.md5ModelVersion(hashes, style: style)
            if md5Values[value] == nil { md5Values[value] = (version.name, style) }
        }
    }

    /// The catalog of `other` added after this one's.
    package func merging(_ other: ModelVersionCatalog?) -> ModelVersionCatalog {
        var result = self
        for version in other?.versions ?? [] { result.add(version) }
        return result
    }

    package var knowsEntityHashes: Bool { versions.contains { $0.entityHashes != nil } }
    package var knowsModelHashes: Bool { versions.contains { $0.modelHash != nil } }

    /// Classifies `modelVersion` and compares it with every known version (Spec/model.md 8.2).
    package func check(_ modelVersion: String) -> ModelVersionCheck {
        if modelVersion.hasPrefix("sha256:") {
            let match = versions.first { $0.modelHash == modelVersion }
            return ModelVersionCheck(form: .sha256, checked: knowsModelHashes, matchedVersion: match?.name)
        }
        if Self.isMD5Form(modelVersion) {
            let match = md5Values[modelVersion.lowercased()]
            return ModelVersionCheck(form: .md5, checked: knowsEntityHashes, matchedVersion: match?.version, descriptionStyle: match?.style)
        }
        guard modelVersion.drop(while: { $0.isWhitespace }).hasPrefix("<") else { return ModelVersionCheck(form: .other, checked: false) }
        if let known = cache.value(modelVersion) { return known }
        let result: ModelVersionCheck
        switch Self.entityHashes(propertyList: modelVersion) {
        case .none:
            result = ModelVersionCheck(form: .other, checked: false)
        case .some(let hashes):
            let match = hashes.flatMap { hashes in versions.first { $0.entityHashes == hashes } }
            result = ModelVersionCheck(form: .propertyList, checked: knowsEntityHashes, matchedVersion: match?.name)
        }
        // Only short texts are kept: a cache of hostile 16 MiB values would hold gigabytes.
        if modelVersion.utf8.count <= 64 * 1024 { cache.store(modelVersion, result) }
        return result
    }

    /// `md5` followed by 32 hexadecimal digits (either case).
    static func isMD5Form(_ value: String) -> Bool {
        let utf8 = Array(value.utf8)
        guard utf8.count == 35, value.hasPrefix("md5") else { return false }
        return utf8.dropFirst(3).allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46) }
    }

    /// The original's `md5` model version of a model whose entities have `hashes`: `md5`, then
    /// the lowercase hex MD5 of the UTF-8 of `Name1_<description1>__Name2_<description2>...`,
    /// names in UTF-16 order (Spec/model.md 8.3).
    package static func md5ModelVersion(_ hashes: [String: [UInt8]], style: DataDescriptionStyle) -> String {
        let names = hashes.keys.sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) }
        let text = names.map { "\($0)_\(style.text(hashes[$0] ?? []))" }.joined(separator: "__")
        return "md5" + lowercaseHex(Insecure.MD5.hash(data: Array(text.utf8)))
    }

    /// The entity hashes of a property-list `modelVersion`: nil when it is not a property list
    /// dictionary (not checked, as the original skips it); `.some(nil)` when it is a dictionary
    /// with a value that is not data (it equals no model version).
    package static func entityHashes(propertyList text: String) -> [String: [UInt8]]?? {
        let bytes = Array(text.utf8)
        guard PropertyListGuard.problem(bytes, limit: maximumPropertyListBytes) == nil,
            let plist = try? PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil),
            let dictionary = plist as? [String: Any]
        else { return nil }
        var hashes: [String: [UInt8]] = [:]
        for (name, value) in dictionary {
            guard let data = value as? Data else { return .some(nil) }
            hashes[name] = Array(data)
        }
        return .some(hashes)
    }

    /// Property-list values repeat across the events of a folder; each is parsed once.
    private final class CheckCache: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [String: ModelVersionCheck] = [:]

        func value(_ key: String) -> ModelVersionCheck? { lock.withLock { values[key] } }

        func store(_ key: String, _ value: ModelVersionCheck) {
            lock.withLock {
                if values.count >= 256 { values.removeAll() }
                values[key] = value
            }
        }
    }
}

extension ModelVersionCatalog {
    /// What the 204 check compares with: the hash of `model` (the version in use, as before
    /// compiled models and stores were known) and every version of `known`; nil when neither is
    /// given, and nothing is checked (Spec/merge.md 5.7).
    package static func forCheck(model: DataModel?, known: ModelVersionCatalog?) -> ModelVersionCatalog? {
        guard model != nil || known != nil else { return nil }
        var catalog = ModelVersionCatalog()
        if let model { catalog.add(KnownModelVersion(name: model.versionName ?? "contents", source: "--model", modelHash: model.modelHash)) }
        return catalog.merging(known)
    }
}
