import JSONDocument
import Foundation

/// What kind of transaction an ``Event`` records (the `type` key of every encoding).
public enum EventType: Int64, Sendable, Hashable, CaseIterable {
    /// Being written locally; never valid in a cloud folder.
    case incomplete = 0
    /// The full state at a revision set: only inserts.
    case baseline = 100
    /// The changes of one save on a store.
    case save = 200
    /// A merge that produced changes.
    case merge = 300
}

/// One transaction log: the unit a store writes into a cloud folder (Spec/README.md section 3, Spec/v2-json.md section 5).
public struct Event: Hashable, Sendable {
    public var uniqueIdentifier: String
    public var type: EventType
    public var storeIdentifier: String
    /// The store's own counter; equal to `revisionSet[storeIdentifier]`.
    public var revision: Int64 { revisionSet[storeIdentifier] ?? -1 }
    /// The revision set (Spec/README.md 2): the event's own revision and the latest revision it
    /// knew of every other store, by store identifier.
    /// Stores whose identifiers differ only in Unicode normalisation are one key of a Swift
    /// dictionary: of two such, the one first in string order is given.
    public var revisionsByStoreIdentifier: [String: Int64] {
        Dictionary(revisionSet.revisions.map { ($0.store, $0.revision) }, uniquingKeysWith: { first, _ in first })
    }
    /// Lamport-style ordering counter.
    public var globalCount: Int64
    /// Seconds since 2001-01-01T00:00:00Z.
    public var timestamp: Double
    /// Which data model wrote the event; nil when unknown.
    public var modelVersion: String?
    /// The event's own (store, revision) plus the latest revision it knew of every other store.
    package var revisionSet: RevisionSet
    /// In canonical order: entity names by UTF-8 bytes, then the order the writer gave.
    public var objectChanges: [ObjectChange]
    /// Top-level keys this toolkit does not know, kept so a rewrite loses nothing.
    public var unknownFields: JSONObject

    public init(
        uniqueIdentifier: String, type: EventType, storeIdentifier: String, revision: Int64,
        globalCount: Int64, timestamp: Double, modelVersion: String? = nil,
        otherStoreRevisions: [String: Int64] = [:], objectChanges: [ObjectChange] = [],
        unknownFields: JSONObject = JSONObject()
    ) {
        var revisions = RevisionSet(otherStoreRevisions)
        revisions[storeIdentifier] = revision
        self.init(
            uniqueIdentifier: uniqueIdentifier, type: type, storeIdentifier: storeIdentifier,
            globalCount: globalCount, timestamp: timestamp, modelVersion: modelVersion,
            revisionSet: revisions, objectChanges: objectChanges, unknownFields: unknownFields)
    }

    /// Takes the revision from `revisionSet`, which must contain `storeIdentifier`.
    package init(
        uniqueIdentifier: String, type: EventType, storeIdentifier: String,
        globalCount: Int64, timestamp: Double, modelVersion: String?,
        revisionSet: RevisionSet, objectChanges: [ObjectChange], unknownFields: JSONObject = JSONObject()
    ) {
        self.uniqueIdentifier = uniqueIdentifier
        self.type = type
        self.storeIdentifier = storeIdentifier
        self.globalCount = globalCount
        self.timestamp = timestamp
        self.modelVersion = modelVersion
        self.revisionSet = revisionSet
        self.objectChanges = ObjectChange.canonicallyOrdered(objectChanges)
        self.unknownFields = unknownFields
    }

    /// Field by field, with the timestamp compared by bit pattern (all NaNs equal): two events
    /// whose timestamps are `0.0` and `-0.0` are different events; identifiers by their exact
    /// bytes (Spec/merge.md 4.2).
    public static func == (lhs: Event, rhs: Event) -> Bool {
        exactlyEqual(lhs.uniqueIdentifier, rhs.uniqueIdentifier) && lhs.type == rhs.type && exactlyEqual(lhs.storeIdentifier, rhs.storeIdentifier)
            && lhs.globalCount == rhs.globalCount && Self.timestampBits(lhs.timestamp) == Self.timestampBits(rhs.timestamp)
            && lhs.modelVersion.map(ExactString.init) == rhs.modelVersion.map(ExactString.init) && lhs.revisionSet == rhs.revisionSet
            && lhs.objectChanges == rhs.objectChanges && lhs.unknownFields == rhs.unknownFields
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ExactString(uniqueIdentifier))
        hasher.combine(ExactString(storeIdentifier))
        hasher.combine(globalCount)
        hasher.combine(Self.timestampBits(timestamp))
        hasher.combine(objectChanges.count)
    }

    private static func timestampBits(_ value: Double) -> UInt64 { value.isNaN ? Double.nan.bitPattern : value.bitPattern }
}

/// Orders strings by their UTF-8 bytes, the one string order every part of the Spec uses.
///
/// Native strings are compared with `memcmp` on their contiguous UTF-8: the generic sequence
/// comparison was a visible share of a million-change merge (measured: Benchmarks/README.md).
@inlinable
public func utf8Precedes(_ a: String, _ b: String) -> Bool {
    ExactString.withUTF8(of: a) { left in ExactString.withUTF8(of: b) { right in utf8Precedes(left, right) } }
}

/// ``utf8Precedes(_:_:)`` of strings given as their UTF-8 bytes.
@inlinable
package func utf8Precedes(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool { utf8Order(left, right) < 0 }

/// How two strings given as their UTF-8 bytes compare in that order: negative when `left` comes
/// first, zero when they are the same bytes, positive when `right` comes first.
@inlinable
package func utf8Order(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Int32 {
    let shared = min(left.count, right.count)
    if shared > 0, let l = left.baseAddress, let r = right.baseAddress {
        let order = memcmp(l, r, shared)
        if order != 0 { return order }
    }
    return left.count == right.count ? 0 : left.count < right.count ? -1 : 1
}
