import Foundation
import JSONDocument
import DataModel
import CoreDataStore

/// The store document of `inspect` (Spec/inspect.md 2.5, 3.5): what an app's Core Data store
/// says about itself.
package enum StoreInspection {
    /// The 16 bytes every SQLite database starts with.
    static let sqliteMagic = Array("SQLite format 3\0".utf8)

    /// A file that starts with SQLite's header and is not named as an event file (an SQLite file
    /// named `*.cdeevent` is an event in a format the toolkit does not read, Spec/wrappers.md 6).
    static func looksLikeStore(_ path: String) -> Bool {
        guard !path.hasSuffix(".cdeevent") else { return false }
        // Only a regular file is opened to look (the event file reader then refuses a special
        // file, as it refuses every one).
        guard CoreDataStoreMetadata.fileType(path) == .typeRegular, let handle = FileHandle(forReadingAtPath: path)
        else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: sqliteMagic.count)).map { Array($0) == sqliteMagic } ?? false
    }

    static func report(path: String) -> JSONValue {
        var store: CoreDataStoreMetadata?
        var errors: [FormatError] = []
        do {
            store = try CoreDataStoreMetadata.read(path: path)
        } catch {
            errors.append(error)
        }
        func string(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        func integer(_ value: Int64?) -> JSONValue { value.map { JSONValue($0) } ?? .null }
        func hex(_ bytes: [UInt8]?) -> JSONValue { bytes.map { .string(lowercaseHex($0)) } ?? .null }
        let entities: [JSONValue] = (store?.entities ?? []).map { entity in
            .object(
                JSONObject([
                    ("name", .string(entity.name)),
                    ("number", integer(entity.number)),
                    ("superNumber", integer(entity.superNumber)),
                    ("parent", string(entity.parent)),
                    ("maxPrimaryKey", integer(entity.maxPrimaryKey)),
                    ("table", string(entity.table)),
                    ("rows", integer(entity.rows)),
                    ("versionHash", hex(entity.versionHash)),
                ]))
        }
        let md5: JSONValue =
            store.map { store in
                .object(
                    JSONObject(
                        DataDescriptionStyle.allCases.map { style in
                            (style.rawValue, .string(ModelVersionCatalog.md5ModelVersion(store.entityHashes, style: style)))
                        }))
            } ?? .null
        return .object(
            JSONObject([
                ("inspectVersion", JSONValue(Int64(1))),
                ("kind", .string("coreDataStore")),
                ("path", .string(path)),
                ("storeType", string(store?.storeType)),
                ("uuid", string(store?.uuid)),
                ("modelVersionIdentifiers", .array((store?.versionIdentifiers ?? []).map(JSONValue.string))),
                ("persistenceFrameworkVersion", integer(store?.persistenceFrameworkVersion)),
                ("modelVersionHashesVersion", integer(store?.hashesVersion)),
                ("modelVersionHashesDigest", string(store?.hashesDigest)),
                ("otherMetadataKeys", .array((store?.otherMetadataKeys ?? []).map(JSONValue.string))),
                ("hashEncoding", .string("hex")),
                ("entities", .array(entities)),
                ("md5ModelVersions", md5),
                (
                    "errors",
                    .array(
                        errors.map { error in
                            .object(JSONObject([("code", .string(error.code.rawValue)), ("message", .string(error.message))]))
                        })
                ),
            ]))
    }
}
