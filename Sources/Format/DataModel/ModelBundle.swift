import Foundation
import JSONDocument

/// A model on disk: an `.xcdatamodeld` bundle, one `.xcdatamodel` version folder, or a bare
/// `contents` file (Spec/model.md, "Locating a model").
public struct ModelBundle: Sendable {
    /// Version names (without `.xcdatamodel`), sorted; one entry for a version folder, empty for
    /// a bare `contents` file.
    public var versions: [String]
    /// The version `.xccurrentversion` names, or the only version.
    public var currentVersion: String?
    /// Why the current version is unknown, reported only when it is needed.
    private var currentVersionError: FormatError?
    private var root: URL
    private var displayPath: String
    private var kind: Kind

    private enum Kind: Sendable { case bundle, versionFolder, contentsFile }

    /// Whether a path names a model rather than a cloud folder or event file.
    public static func looksLikeModel(_ path: String) -> Bool {
        let name = URL(fileURLWithPath: path).standardizedFileURL.lastPathComponent
        return name.hasSuffix(".xcdatamodeld") || name.hasSuffix(".xcdatamodel") || name == "contents"
    }

    public init(path: String) throws(FormatError) {
        root = URL(fileURLWithPath: path).standardizedFileURL
        displayPath = path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isDirectory) else {
            throw FormatError(.dataModelUnreadable, "no such model file or folder", location: .init(file: path))
        }
        if !isDirectory.boolValue {
            kind = .contentsFile
            versions = []
            currentVersion = nil
        } else if root.lastPathComponent.hasSuffix(".xcdatamodeld") {
            kind = .bundle
            let names = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
            versions = names.filter { $0.hasSuffix(".xcdatamodel") && !$0.hasPrefix(".") }
                .map { String($0.dropLast(".xcdatamodel".count)) }
                .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            do {
                currentVersion = try Self.currentVersion(of: root, versions: versions, displayPath: path)
            } catch {
                currentVersion = nil
                currentVersionError = error
            }
        } else {
            kind = .versionFolder
            let name = root.lastPathComponent
            let version = name.hasSuffix(".xcdatamodel") ? String(name.dropLast(".xcdatamodel".count)) : name
            versions = [version]
            currentVersion = version
        }
    }

    /// Reads a version: the current one when `version` is nil.
    public func load(version: String? = nil) throws(FormatError) -> DataModel {
        switch kind {
        case .contentsFile:
            if let version {
                throw FormatError(.dataModelVersionNotFound, "a bare contents file has no version \"\(version)\"", location: .init(file: displayPath))
            }
            return try ModelXMLReader.read(contentsOf: root, displayPath: displayPath, versionName: nil, followingLink: true)
        case .versionFolder:
            if let version, version != versions.first {
                throw FormatError(
                    .dataModelVersionNotFound, "this version folder holds \"\(versions.first ?? "")\", not \"\(version)\"", location: .init(file: displayPath))
            }
            return try ModelXMLReader.read(
                contentsOf: root.appendingPathComponent("contents"),
                displayPath: displayPath + "/contents", versionName: versions.first, followingLink: false)
        case .bundle:
            if version == nil, let currentVersionError { throw currentVersionError }
            guard let chosen = version ?? currentVersion else {
                throw FormatError(
                    .dataModelNoCurrentVersion, "the bundle has \(versions.count) versions and no .xccurrentversion naming one; choose a version",
                    location: .init(file: displayPath))
            }
            guard versions.contains(chosen) else {
                throw FormatError(
                    .dataModelVersionNotFound, "the bundle has no version \"\(chosen)\" (it has \(versions.joined(separator: ", ")))",
                    location: .init(file: displayPath))
            }
            let folder = "\(chosen).xcdatamodel"
            let type = (try? FileManager.default.attributesOfItem(atPath: root.appendingPathComponent(folder).path))?[.type] as? FileAttributeType
            guard type != .typeSymbolicLink else {
                throw FormatError(
                    .dataModelUnreadable, "the version folder is a symbolic link, which is never followed", location: .init(file: "\(displayPath)/\(folder)"))
            }
            return try ModelXMLReader.read(
                contentsOf: root.appendingPathComponent(folder).appendingPathComponent("contents"),
                displayPath: "\(displayPath)/\(folder)/contents", versionName: chosen, followingLink: false)
        }
    }

    private static func currentVersion(of bundle: URL, versions: [String], displayPath: String) throws(FormatError) -> String? {
        let location = FormatError.Location(file: displayPath + "/.xccurrentversion")
        guard
            let bytes = try ModelFile.contents(
                of: bundle.appendingPathComponent(".xccurrentversion"), name: ".xccurrentversion", followingLink: false,
                limit: ModelXMLReader.maximumBytes, location: location)
        else { return versions.count == 1 ? versions[0] : nil }
        // Guarded: a property list of a few hundred bytes whose arrays share members expanded
        // without bound when it was bridged (Spec/model.md 8.5).
        let plist = try? PropertyListGuard.read(bytes, limit: ModelXMLReader.maximumBytes, code: .dataModelUnreadable, location: location)
        guard let name = (plist as? [String: Any])?["_XCCurrentVersionName"] as? String else {
            throw FormatError(.dataModelUnreadable, ".xccurrentversion is not a property list with a string _XCCurrentVersionName", location: location)
        }
        let version = name.hasSuffix(".xcdatamodel") ? String(name.dropLast(".xcdatamodel".count)) : name
        guard versions.contains(version) else {
            throw FormatError(
                .dataModelVersionNotFound, ".xccurrentversion names \"\(name)\", which the bundle does not contain", location: location)
        }
        return version
    }
}
