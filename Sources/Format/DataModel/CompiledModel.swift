import Foundation
import JSONDocument

/// A compiled model (`.momd` folder, or a `.mom` file with the folder's `VersionInfo.plist`
/// beside it): the entity version hashes of its versions, from `VersionInfo.plist`
/// (Spec/model.md 8.4). The `.mom` bodies are keyed archives of Apple's classes, which cannot be
/// read here, so a compiled model gives no entities or properties: only model versions.
package enum CompiledModel {
    /// The largest `VersionInfo.plist` read, as for model files (Spec/model.md 2.5).
    package static let maximumBytes = 16 * 1024 * 1024

    /// Whether `path` names a compiled model rather than an `.xcdatamodel(d)`.
    package static func looksLikeCompiledModel(_ path: String) -> Bool {
        let name = URL(fileURLWithPath: path).standardizedFileURL.lastPathComponent
        return name.hasSuffix(".momd") || name.hasSuffix(".mom")
    }

    /// Every version of a `.momd` (or the one `version` names), or the version of a `.mom`.
    package static func versions(at path: String, version: String? = nil) throws(FormatError) -> [KnownModelVersion] {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw FormatError(.dataModelUnreadable, "no such compiled model", location: .init(file: path))
        }
        let folder = isDirectory.boolValue ? url : url.deletingLastPathComponent()
        let infoPath = isDirectory.boolValue ? path + "/VersionInfo.plist" : folder.appendingPathComponent("VersionInfo.plist").path
        let location = FormatError.Location(file: infoPath)
        guard
            let bytes = try ModelFile.contents(
                of: folder.appendingPathComponent("VersionInfo.plist"), name: "VersionInfo.plist", followingLink: false, limit: maximumBytes,
                location: location)
        else {
            let why =
                isDirectory.boolValue
                ? "the .momd has no VersionInfo.plist" : "a .mom is read only with the VersionInfo.plist of its .momd beside it"
            throw FormatError(.dataModelUnreadable, why, location: location)
        }
        let plist = try PropertyListGuard.read(bytes, limit: maximumBytes, code: .dataModelUnreadable, location: location)
        guard let hashesByVersion = (plist as? [String: Any])?["NSManagedObjectModel_VersionHashes"] as? [String: Any] else {
            throw FormatError(.dataModelUnreadable, "VersionInfo.plist has no dictionary NSManagedObjectModel_VersionHashes", location: location)
        }
        var result: [KnownModelVersion] = []
        for (name, value) in hashesByVersion {
            guard let entities = value as? [String: Any] else {
                throw FormatError(.dataModelUnreadable, "the hashes of version \(name) are not a dictionary", location: location)
            }
            var hashes: [String: [UInt8]] = [:]
            for (entity, hash) in entities {
                guard let data = hash as? Data else {
                    throw FormatError(.dataModelUnreadable, "the hash of entity \(entity) in version \(name) is not data", location: location)
                }
                hashes[entity] = Array(data)
            }
            result.append(KnownModelVersion(name: name, source: path, entityHashes: hashes))
        }
        result.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        let wanted = version ?? (isDirectory.boolValue ? nil : String(url.lastPathComponent.dropLast(".mom".count)))
        guard let wanted else { return result }
        let chosen = result.filter { $0.name == wanted }
        guard !chosen.isEmpty else {
            throw FormatError(
                .dataModelVersionNotFound, "VersionInfo.plist has no version \"\(wanted)\" (it has \(result.map(\.name).joined(separator: ", ")))",
                location: location)
        }
        return chosen
    }
}
