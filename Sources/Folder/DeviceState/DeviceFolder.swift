import FileInput
import Foundation
import JSONDocument
import KeyedArchive

extension FormatError.Code {
    /// The path is neither an ensemble's event-data folder nor an event-data root holding exactly
    /// one ensemble folder (Spec/device-state.md 6.1).
    public static let eventDataNotDeviceFolder = Self("eventdata.not-device-folder")
    /// `store.plist` is missing, is not a property-list dictionary, or has no string
    /// `persistentStoreIdentifier` (Spec/device-state.md 6.2).
    public static let eventDataInvalidStoreInfo = Self("eventdata.invalid-store-info")
    /// A row of the event store lacks what an event needs: its own revision, a unique identifier,
    /// a known type (Spec/device-state.md 6.3).
    public static let eventDataInvalidEvent = Self("eventdata.invalid-event")
}

/// Where one ensemble's state lies on a device (Spec/device-state.md 6.1): the ensemble folder
/// `ROOT/<ensemble>/` and the transit cache `ROOT/transitcache/<ensemble>/`.
package struct DeviceFolder: Sendable, Hashable {
    /// The ensemble identifier: the ensemble folder's name.
    package var ensemble: String
    /// `ROOT/<ensemble>`.
    package var folder: String
    /// `ROOT/transitcache/<ensemble>`.
    package var transitCache: String

    package var eventStore: String { folder + "/events.sqlite" }
    package var storeInfo: String { folder + "/store.plist" }

    /// Whether `path` is a regular file, a folder or a link (without following a link).
    static func entryType(_ path: String) -> FileAttributeType? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.type] as? FileAttributeType
    }

    /// Whether a folder is an ensemble folder: it holds `events.sqlite` or `store.plist`.
    static func isEnsembleFolder(_ path: String) -> Bool {
        entryType(path) == .typeDirectory && (entryType(path + "/events.sqlite") != nil || entryType(path + "/store.plist") != nil)
    }

    /// The ensemble folders of an event-data root, by name (UTF-8 order); `transitcache` is not one.
    static func ensembleFolders(in root: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return names.filter { $0 != "transitcache" && !$0.hasPrefix(".") && isEnsembleFolder(root + "/" + $0) }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// Whether `path` looks like a device's folder rather than a cloud folder: an ensemble folder,
    /// or a folder with an ensemble folder in it.
    package static func looksLikeDevice(_ path: String) -> Bool {
        isEnsembleFolder(path) || (entryType(path) == .typeDirectory && !ensembleFolders(in: path).isEmpty)
    }

    /// The ensemble folder `path` names, or the one ensemble folder of the event-data root `path`.
    package static func locate(_ path: String) throws(FormatError) -> DeviceFolder {
        let location = FormatError.Location(file: path)
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        guard entryType(trimmed) == .typeDirectory else {
            throw FormatError(.eventDataNotDeviceFolder, "not a folder", location: location)
        }
        let folder: String
        if isEnsembleFolder(trimmed) {
            folder = trimmed
        } else {
            let ensembles = ensembleFolders(in: trimmed)
            guard ensembles.count == 1 else {
                throw FormatError(
                    .eventDataNotDeviceFolder,
                    ensembles.isEmpty
                        ? "neither an ensemble folder (events.sqlite, store.plist) nor an event-data folder holding one"
                        : "an event-data folder of \(ensembles.count) ensembles (\(ensembles.joined(separator: ", "))): give one of them",
                    location: location)
            }
            folder = trimmed + "/" + ensembles[0]
        }
        let url = URL(fileURLWithPath: folder)
        let ensemble = url.lastPathComponent
        let root = url.deletingLastPathComponent().path
        return DeviceFolder(ensemble: ensemble, folder: folder, transitCache: root + "/transitcache/" + ensemble)
    }

    /// The names of the regular files of `path` (none when it is missing), in UTF-8 order.
    package static func fileNames(in path: String) -> [String] {
        guard entryType(path) == .typeDirectory else { return [] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.filter { entryType(path + "/" + $0) == .typeRegular }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// Whether the file at `path` is a property-list dictionary (what the original checks of a
    /// registration file, Spec/device-state.md 5.7).
    package static func isPropertyListDictionary(_ path: String) -> Bool {
        guard let bytes = try? FileInput.read(path: path, limit: DeviceStoreInfo.maximumBytes),
            case .dictionary? = try? PropertyListValue.read(bytes, maximumBytes: DeviceStoreInfo.maximumBytes, maximumDepth: 64)
        else { return false }
        return true
    }
}

/// What `store.plist` says (Spec/device-state.md 5.2, device-state-notes.md 2).
package struct DeviceStoreInfo: Sendable, Hashable {
    package var storeIdentifier: String
    /// Whether `cloudFileSystemIdentity` is a keyed archive.
    package var backendIdentityArchived: Bool
    /// The archive's root value (or the plain value), as JSON; null when absent.
    package var backendIdentity: JSONValue
    package var verifiesStoreRegistrationInCloud: Bool
    package var baselineUsedToConstructStore: String?
    /// `incompleteEventIdentifiers`: identifier -> mandatory, identifiers told apart by their bytes.
    package var incompleteEvents: [ExactString: Bool]

    /// The largest `store.plist` or registration property list read (the original writes a few
    /// hundred bytes).
    static let maximumBytes = 16 * 1024 * 1024

    package static func read(path: String) throws(FormatError) -> DeviceStoreInfo {
        let location = FormatError.Location(file: path)
        let bytes: [UInt8]
        do {
            bytes = try FileInput.read(path: path, limit: maximumBytes)
        } catch {
            switch error {
            case .cannotOpen(errno: ENOENT), .cannotOpen(errno: ELOOP), .notRegular:
                throw FormatError(.eventDataInvalidStoreInfo, "no store.plist (or not a regular file): the device is not leeched", location: location)
            case .tooLarge: throw FormatError(.eventDataInvalidStoreInfo, "larger than the limit of \(maximumBytes) bytes", location: location)
            case .cannotOpen, .cannotRead:
                throw FormatError(.eventDataInvalidStoreInfo, "store.plist could not be read: \(error.reason)", location: location)
            }
        }
        let plist: PropertyListValue
        do {
            plist = try PropertyListValue.read(bytes, maximumBytes: maximumBytes, maximumDepth: 64)
        } catch {
            throw FormatError(.eventDataInvalidStoreInfo, "not a property list: \(error.message)", location: location)
        }
        guard case .dictionary(let info) = plist else {
            throw FormatError(.eventDataInvalidStoreInfo, "not a property-list dictionary", location: location)
        }
        guard case .string(let store)? = info["persistentStoreIdentifier"] else {
            throw FormatError(
                .eventDataInvalidStoreInfo, "no string persistentStoreIdentifier: the device is not leeched",
                location: location.with(.root / "persistentStoreIdentifier"))
        }
        var archived = false
        var identity = JSONValue.null
        switch info["cloudFileSystemIdentity"] {
        case .data(let bytes)?:
            if let archive = try? KeyedArchiveReader(classes: .foundation).read(bytes), let root = archive.root {
                archived = true
                identity = root.jsonValue
            } else {
                identity = .string(Data(bytes).base64EncodedString())
            }
        case let value?: identity = value.jsonValue
        case nil: break
        }
        var incomplete: [ExactString: Bool] = [:]
        if case .dictionary(let listed)? = info["incompleteEventIdentifiers"] {
            for (identifier, value) in listed {
                switch value {
                case .bool(let mandatory): incomplete[identifier] = mandatory
                case .integer(let number): incomplete[identifier] = number != 0
                default: incomplete[identifier] = false
                }
            }
        }
        var verifies = false
        if case .bool(let flag)? = info["verifiesStoreRegistrationInCloud"] { verifies = flag }
        var baseline: String?
        if case .string(let identifier)? = info["identifierOfBaselineUsedToConstructStore"] { baseline = identifier }
        return DeviceStoreInfo(
            storeIdentifier: store, backendIdentityArchived: archived, backendIdentity: identity, verifiesStoreRegistrationInCloud: verifies,
            baselineUsedToConstructStore: baseline, incompleteEvents: incomplete)
    }
}

extension FormatError.Location {
    fileprivate func with(_ pointer: JSONPointer) -> Self {
        var copy = self
        copy.pointer = pointer
        return copy
    }
}

extension PropertyListValue {
    /// As JSON: data as base64 text, dates as seconds from 2001, UIDs as numbers.
    var jsonValue: JSONValue {
        switch self {
        case .bool(let value): .bool(value)
        case .integer(let value): JSONValue(value)
        case .real(let value): value.isFinite ? JSONValue(value) : .null
        case .date(let value): value.isFinite ? JSONValue(value) : .null
        case .data(let bytes): .string(Data(bytes).base64EncodedString())
        case .string(let text): .string(text)
        case .uid(let number): JSONValue(Int64(clamping: number))
        case .array(let values): .array(values.map(\.jsonValue))
        case .dictionary(let members): .object(JSONObject(members.inUTF8Order.map { ($0.key.value, $0.value.jsonValue) }))
        }
    }
}
