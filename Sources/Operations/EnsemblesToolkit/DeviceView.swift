import JSONDocument
import EnsembleModel
import MergeEngine

/// The folder as one device sees it (Spec/merge.md 15): the state it reaches, the events it
/// holds back with their reasons, and what is not yet visible to it.
public struct DeviceView: Sendable {
    /// What the device does: `integrates`, `deleeches` or `integrates-nothing`.
    public var outcome: String
    public var store: String
    /// Why nothing is integrated, when the outcome is not `integrates`.
    public var stop: IntegrityProblem?
    /// The state after integrating; nil when the device integrates nothing.
    public var state: StoreState?
    /// The report document of Spec/merge.md 15.6 (schema `device.schema.json`).
    public var report: JSONValue
    /// Whether the device integrates every visible event: nothing held back, no stop.
    public var integratesEverything: Bool
    /// The stop, then one finding per reason of each held-back baseline and event, with its
    /// delivery (Spec/merge.md 5.9): what `merge --as-store` writes on standard error.
    public var findings: [IntegrityProblem] = []
    /// The events integrated, in replay order, by store, revision and file: what `diff` compares
    /// (Spec/diff.md 4).
    package var integrated: [(store: String, revision: Int64, file: String)] = []
    /// The merged revision set of the baselines that take part: the events it covers are in
    /// the state through them (Spec/merge.md 15.4 step 5). Nil when no baseline takes part.
    package var baselineRevisions: RevisionSet?

    init(_ integration: DeviceIntegration, state: StoreState?, evidence: DeliveryEvidence?) {
        outcome = integration.outcome.rawValue
        store = integration.store
        stop = integration.stop
        self.state = state
        integrated = integration.integrable.map { ($0.event.storeIdentifier, $0.event.revision, $0.file) }
        if let first = integration.baselines.first {
            baselineRevisions = integration.baselines.dropFirst().reduce(into: first.event.revisionSet) { $0.merge(with: $1.event.revisionSet) }
        }
        integratesEverything =
            integration.outcome == .integrates && integration.heldBack.isEmpty && integration.heldBackBaselines.isEmpty
        func delivered(_ problem: IntegrityProblem) -> IntegrityProblem {
            var problem = problem
            // A dependency that is present but held back is not waiting for a delivery.
            guard problem.details["dependency"]?.stringValue != "held-back" else { return problem }
            if let delivery = evidence?.delivery(problem.code, problem.details) { problem.details["delivery"] = delivery }
            return problem
        }
        func reason(_ problem: IntegrityProblem) -> JSONValue { delivered(problem).jsonValue }
        findings =
            (integration.stop.map { [delivered($0)] } ?? [])
            // Events held back only because nothing is integrable are said once, by the stop.
            + (integration.heldBackBaselines + integration.heldBack).flatMap { $0.reasons.map(delivered) }.filter { $0.code != integration.stop?.code }
        func heldBack(_ item: DeviceIntegration.HeldBack) -> JSONValue {
            .object(
                JSONObject([
                    ("file", .string(item.sourced.file)), ("store", .string(item.sourced.event.storeIdentifier)),
                    ("revision", JSONValue(item.sourced.event.revision)), ("reasons", .array(item.reasons.map(reason))),
                ]))
        }
        report = .object(
            JSONObject([
                ("store", .string(integration.store)),
                ("outcome", .string(integration.outcome.rawValue)),
                ("stop", integration.stop.map(reason) ?? .null),
                ("baselines", .array(integration.baselines.map { .string($0.file) })),
                ("heldBackBaselines", .array(integration.heldBackBaselines.map(heldBack))),
                ("integrated", JSONValue(Int64(integration.integrable.count))),
                ("covered", JSONValue(Int64(integration.coveredCount))),
                ("heldBack", .array(integration.heldBack.map(heldBack))),
                ("pending", .array(integration.pending.map { .array($0.files.map(JSONValue.string)) })),
                ("informativeCodes", .array(integration.informativeCodes.map { JSONValue(Int64($0)) })),
            ]))
    }
}

extension IntegrityProblem {
    /// The finding as a JSON object: code, details, files, message, number (Spec/merge.md 10).
    public var jsonValue: JSONValue {
        .object(
            JSONObject([
                ("code", .string(code.rawValue)),
                ("details", .object(details)),
                ("files", .array(files.map(JSONValue.string))),
                ("message", .string(message)),
                ("number", number.map { JSONValue(Int64($0)) } ?? .null),
            ]))
    }
}
