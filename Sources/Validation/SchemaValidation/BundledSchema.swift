import JSONDocument

/// The schemas of `Spec/schemas/`, compiled into the library from those very files.
package enum BundledSchema: String, CaseIterable, Sendable {
    /// One v2 JSON event file (single file, part 1 or continuation part).
    case v2Event = "v2-event"
    /// One v1 (1.x-style) JSON file: an event or a log.
    case v1Event = "v1-event"
    /// The `logtool inspect --json` document.
    case inspect = "inspect"
    /// The merged store state `logtool merge` prints.
    case state = "state"
    /// The `logtool verify --json` document.
    case verify = "verify"
    /// The `logtool history --json` document.
    case history = "history"
    /// The `logtool merge --as-store --json` document.
    case device = "device"
    /// The `logtool repair --json` document.
    case repair = "repair"
    /// The facts of an Ensembles 1.x device folder (Spec/device-state.md 5).
    case deviceState = "device-state"
    /// The `logtool diff --json` document (Spec/diff.md 6.2).
    case diff = "diff"

    /// The schema file's bytes as shipped in `Spec/schemas/`.
    package var bytes: [UInt8] {
        switch self {
        case .v2Event: PackageResources.v2_event_schema_json
        case .v1Event: PackageResources.v1_event_schema_json
        case .inspect: PackageResources.inspect_schema_json
        case .state: PackageResources.state_schema_json
        case .verify: PackageResources.verify_schema_json
        case .history: PackageResources.history_schema_json
        case .device: PackageResources.device_schema_json
        case .repair: PackageResources.repair_schema_json
        case .deviceState: PackageResources.device_state_schema_json
        case .diff: PackageResources.diff_schema_json
        }
    }

    /// Every violation of this schema by `instance`, as ``SchemaValidator/validate(_:limit:)``
    /// reports them; empty means valid.
    package func validate(_ instance: JSONValue, limit: Int = 100) throws(FormatError) -> [FormatError] {
        try validator().validate(instance, limit: limit)
    }

    /// A validator for this schema. The Spec's schemas are tested to load, so a failure here
    /// means the build shipped a broken schema; it is still reported, not trapped.
    package func validator() throws(FormatError) -> SchemaValidator {
        try (Self.validators[self] ?? Self.load(self)).get()
    }

    private static let validators: [BundledSchema: Result<SchemaValidator, FormatError>] =
        Dictionary(uniqueKeysWithValues: allCases.map { ($0, load($0)) })

    private static func load(_ schema: BundledSchema) -> Result<SchemaValidator, FormatError> {
        Result { () throws(FormatError) -> SchemaValidator in
            do throws(FormatError) {
                return try SchemaValidator(schema: try JSONParser.parse(schema.bytes))
            } catch {
                throw error.inFile("Spec/schemas/\(schema.rawValue).schema.json")
            }
        }
    }
}
