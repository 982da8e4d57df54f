import JSONDocument

/// The key names of the v2 JSON dialect (Spec/v2-json.md), in one place for the reader and
/// the writer.
enum V2Key {
    static let uniqueIdentifier = "uniqueIdentifier"
    static let type = "type"
    static let globalCount = "globalCount"
    static let timestamp = "timestamp"
    static let storeIdentifier = "storeIdentifier"
    static let modelVersion = "modelVersion"
    static let revisionsByStoreIdentifier = "revisionsByStoreIdentifier"
    static let changesByEntity = "changesByEntity"

    static let globalIdentifier = "globalIdentifier"
    static let properties = "properties"
    static let dataFiles = "dataFiles"

    static let propertyName = "propertyName"
    static let nameAlias = "name"
    static let value = "value"
    static let filename = "filename"
    static let relatedIdentifier = "relatedIdentifier"
    static let addedIdentifiers = "addedIdentifiers"
    static let removedIdentifiers = "removedIdentifiers"
    static let movedIdentifiersByIndex = "movedIdentifiersByIndex"

    /// Keys only part 1 (or a single-file event) may carry.
    static let header: [String] = [
        uniqueIdentifier, type, globalCount, timestamp, storeIdentifier,
        modelVersion, revisionsByStoreIdentifier,
    ]
    /// Header keys a single-file event or part 1 must carry.
    static let requiredHeader: [String] = header.filter { $0 != modelVersion }
    static let event: Set<String> = Set(header + [changesByEntity])
    static let objectChange: Set<String> = [type, globalIdentifier, properties, dataFiles]
    static let propertyCommon: Set<String> = [propertyName, nameAlias, type]
    static let attributeKeys: Set<String> = [value, filename]
    static let toOneKeys: Set<String> = [relatedIdentifier]
    static let toManyKeys: Set<String> = [addedIdentifiers, removedIdentifiers]
    static let orderedToManyKeys: Set<String> = [addedIdentifiers, removedIdentifiers, movedIdentifiersByIndex]
    static let allPropertyKeys: Set<String> = propertyCommon.union(attributeKeys).union(toOneKeys).union(orderedToManyKeys)
}

/// The tags of attribute values JSON cannot carry directly: `["<tag>", <payload>]`.
enum V2ValueTag {
    static let decimal = "decimal"
    static let date = "date"
    static let data = "data"
    static let number = "number"
    static let uuid = "uuid"
    static let url = "url"
}

extension FormatError.Code {
    public static let v2Structure = Self("v2.structure")
    public static let v2MissingHeader = Self("v2.missing-header")
    public static let v2HeaderInContinuation = Self("v2.header-in-continuation")
    public static let v2MissingOwnRevision = Self("v2.missing-own-revision")
    public static let v2UnknownEventType = Self("v2.unknown-event-type")
    public static let v2UnknownChangeType = Self("v2.unknown-change-type")
    public static let v2UnknownPropertyKind = Self("v2.unknown-property-kind")
    public static let v2KeyForOtherKind = Self("v2.key-for-other-kind")
    public static let v2DuplicateProperty = Self("v2.duplicate-property")
    public static let v2DuplicateIdentifier = Self("v2.duplicate-identifier")
    public static let v2ValueAndFilename = Self("v2.value-and-filename")
    public static let v2InvalidTimestamp = Self("v2.invalid-timestamp")
    public static let v2InvalidIndex = Self("v2.invalid-index")
    public static let v2IntegerOutOfRange = Self("v2.integer-out-of-range")
    public static let v2NumberOutOfRange = Self("v2.number-out-of-range")
    public static let v2InvalidValue = Self("v2.invalid-value")
    public static let v2UnknownValueTag = Self("v2.unknown-value-tag")
    public static let v2InvalidDecimal = Self("v2.invalid-decimal")
    public static let v2InvalidBase64 = Self("v2.invalid-base64")
    public static let v2InvalidUUID = Self("v2.invalid-uuid")
    public static let v2UnencodableValue = Self("v2.unencodable-value")
    public static let v2IncompleteParts = Self("v2.incomplete-parts")
}

/// An unknown member kept from another dialect must not collide with a key the writing dialect
/// uses at that level: it would be read back as that key, or lost.
func checkNoClash(
    _ unknown: JSONObject, with keys: Set<String>, at pointer: JSONPointer,
    code: FormatError.Code, dialect: String
) throws(FormatError) {
    if let key = unknown.keys.first(where: keys.contains) {
        throw FormatError(code, "the unknown member \"\(key)\" has the name of a \(dialect) key and would be lost", at: pointer / key)
    }
}
