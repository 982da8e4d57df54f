import Foundation
import Crypto
import JSONDocument
import EnsembleModel

/// How a rebase names its baseline (Spec/merge.md 13.4, 13.5).
package enum BaselineNaming {
    /// The first 16 bytes of the SHA-256 of the revision set's canonical JSON, as an uppercase
    /// UUID text: the same folded history always gets the same identifier.
    package static func uniqueIdentifier(for revisionSet: RevisionSet) -> String {
        let object = JSONValue.object(JSONObject(revisionSet.stores.map { ($0, JSONValue(revisionSet[$0] ?? 0)) }))
        let digest = Array(SHA256.hash(data: JSONWriter().bytes(object)).prefix(16))
        let hex = digest.map { String(format: "%02X", $0) }.joined()
        let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(hex[hex.index(hex.startIndex, offsetBy: range.lowerBound)..<hex.index(hex.startIndex, offsetBy: range.upperBound)])
        }
        return groups.joined(separator: "-")
    }

    /// `<C>_<uid>_<first 8 UTF-16 code units of the store>.cdeevent`, or the legacy form without
    /// a store prefix when the store is shorter or the 8th unit would split a character.
    package static func fileName(globalCount: Int64, uniqueIdentifier: String, store: String) -> String {
        let units = Array(store.utf16)
        if units.count >= 8, !UTF16.isLeadSurrogate(units[7]) {
            let prefix = String(decoding: units[0..<8], as: UTF16.self)
            return "\(globalCount)_\(uniqueIdentifier)_\(prefix)\(CloudFileName.eventExtension)"
        }
        return "\(globalCount)_\(uniqueIdentifier)\(CloudFileName.eventExtension)"
    }
}
