import Foundation

/// One wrapper removed from a file (Spec/wrappers.md 5).
package enum WrapperLayer: String, Sendable, Hashable {
    case zip
    case encrypted

    /// The name of a stack of layers, outermost first, as verify and inspect show it:
    /// `plain`, `zip`, `encrypted`, `encrypted+zip` (encrypted outside, zip inside)...
    package static func stackName(_ layers: [WrapperLayer]) -> String {
        layers.isEmpty ? "plain" : layers.map(\.rawValue).joined(separator: "+")
    }

    /// The kind a layer is detected as.
    var kind: ContentKind { self == .zip ? .zip : .encrypted }
}

/// Where the password of an encrypted folder comes from. The password is asked for only when an
/// encrypted file is met, so plain folders never prompt, and it is checked once per command
/// (``check(_:)``, Spec/wrappers.md 5.5). Shared by every copy of a reader.
public final class PasswordSource: @unchecked Sendable {
    private let lock = NSLock()
    private var resolved: RNCryptor.Credentials??
    /// The outcome of ``check(_:)``, once made: nil until then.
    private var verdict: FormatError??
    private let ask: @Sendable (_ attempt: Int) -> RNCryptor.Credentials?
    /// How many answers in all a wrong password may be replaced by (1: no second chance).
    public let attempts: Int

    /// A source that gives `provide`'s answer, asked at the first encrypted file; a wrong
    /// password is not asked again.
    public convenience init(_ provide: @escaping @Sendable () -> RNCryptor.Credentials?) {
        self.init(attempts: 1) { _ in provide() }
    }

    /// A source that asks `ask` at the first encrypted file (attempt 1) and, while the password
    /// check refuses the answer, again, up to `attempts` answers in all: a prompt on a terminal
    /// (Spec/wrappers.md 5.5). An attempt after the first that gets no answer gives up.
    public init(attempts: Int, _ ask: @escaping @Sendable (_ attempt: Int) -> RNCryptor.Credentials?) {
        self.attempts = max(1, attempts)
        self.ask = ask
    }

    /// A known password.
    public convenience init(password: String) {
        let credentials = RNCryptor.Credentials.password(password)
        self.init { credentials }
    }

    /// The credentials, or nil when none can be had.
    public func credentials() -> RNCryptor.Credentials? {
        lock.lock()
        defer { lock.unlock() }
        return resolvedCredentials()
    }

    private func resolvedCredentials() -> RNCryptor.Credentials? {
        if let resolved { return resolved }
        let answer = ask(1)
        resolved = .some(answer)
        return answer
    }

    /// The password check of a command (Spec/wrappers.md 5.5), made once: later calls give the
    /// first call's outcome without calling `next`. `next` gives the command's files whose
    /// outer layer is encrypted, in the order the Spec fixes, one per call (nil: no more); only
    /// the first two files that can tell (password mode, an HMAC that can be computed) are
    /// asked for, and nothing is asked for when no password is given. The password is right
    /// when it opens the first of them or, should that one be damaged, the second; otherwise
    /// the answer is asked again while ``attempts`` allow, and then the check throws one
    /// `wrap.bad-password` naming the first file, at its HMAC. Without such a file, or without a
    /// password, there is nothing to check and each file says for itself.
    package func check(_ next: () -> (file: String, bytes: [UInt8])?) throws(FormatError) {
        lock.lock()
        defer { lock.unlock() }
        if let verdict {
            if let error = verdict { throw error }
            return
        }
        var witnesses: [(file: String, bytes: [UInt8])] = []
        var exhausted = false
        /// The `index`th file that can tell, fetched from `next` when first needed.
        func witness(_ index: Int) -> (file: String, bytes: [UInt8])? {
            while witnesses.count <= index && !exhausted {
                guard let file = next() else {
                    exhausted = true
                    break
                }
                if RNCryptor.passwordHMACStart(file.bytes) != nil { witnesses.append(file) }
            }
            return index < witnesses.count ? witnesses[index] : nil
        }
        guard let first = witness(0) else {
            verdict = .some(nil)
            return
        }
        var attempt = 1
        var answer = resolvedCredentials()
        while true {
            guard case .password(let password)? = answer else {
                // No password (each encrypted file is then wrap.password-required), or keys,
                // which password-mode files do not take: nothing to check. A later attempt
                // without an answer is the user giving up.
                if attempt == 1 {
                    verdict = .some(nil)
                    return
                }
                break
            }
            if RNCryptor.passwordOpens(first.bytes, password: password) == true
                || witness(1).flatMap({ RNCryptor.passwordOpens($0.bytes, password: password) }) == true
            {
                resolved = .some(answer)
                verdict = .some(nil)
                return
            }
            guard attempt < attempts else { break }
            attempt += 1
            answer = ask(attempt)
        }
        let hmacStart = RNCryptor.passwordHMACStart(first.bytes) ?? 0
        let reason =
            witness(1) == nil
            ? "wrong password, or this file was changed after it was encrypted: its HMAC at byte \(hmacStart) does not match"
            : "wrong password: it opens neither this file (its HMAC at byte \(hmacStart) does not match) nor the next encrypted file"
        let error = FormatError(
            .wrapBadPassword, "\(reason); nothing was read (Spec/wrappers.md 5.5)", location: .init(file: first.file, offset: hmacStart))
        verdict = .some(error)
        throw error
    }
}

/// Removes the wrappers of a cloud file: at most two layers, zip and encryption in either order,
/// each at most once (Spec/wrappers.md 5).
package struct Unwrapper: Sendable {
    /// The password of encrypted files; nil: an encrypted file is `wrap.password-required`.
    package var password: PasswordSource?
    /// The largest content a layer may produce (the JSON reader's file limit, 256 MiB).
    package var maximumBytes: Int

    package static let maximumLayers = 2

    package init(password: PasswordSource? = nil, maximumBytes: Int = 256 * 1024 * 1024) {
        self.password = password
        self.maximumBytes = maximumBytes
    }

    /// A file with its wrappers removed.
    package struct Unwrapped: Sendable {
        /// The layers removed, outermost first.
        package var layers: [WrapperLayer]
        /// The content inside them.
        package var bytes: [UInt8]
        /// What the content is.
        package var kind: ContentKind
    }

    /// Removes every wrapper of `bytes`. Errors carry the offset in the bytes of the layer they
    /// were found in, and their message names that layer (Spec/wrappers.md 5.2).
    package func unwrap(_ bytes: [UInt8]) throws(FormatError) -> Unwrapped {
        var layers: [WrapperLayer] = []
        var content = bytes
        var kind = ContentKind.detect(content)
        while kind.isWrapper {
            let layer: WrapperLayer = kind == .zip ? .zip : .encrypted
            guard layers.count < Self.maximumLayers, !layers.contains(layer) else {
                throw FormatError(
                    .wrapTooManyLayers,
                    "\(Self.where(layers)) is \(kind.displayName) again; a cloud file has at most one zip and one encryption layer",
                    location: .init(offset: 0))
            }
            do throws(FormatError) {
                content = try remove(layer, from: content)
            } catch {
                throw layers.isEmpty ? error : Self.inLayer(error, layers)
            }
            layers.append(layer)
            kind = ContentKind.detect(content)
        }
        return Unwrapped(layers: layers, bytes: content, kind: kind)
    }

    private func remove(_ layer: WrapperLayer, from bytes: [UInt8]) throws(FormatError) -> [UInt8] {
        switch layer {
        case .zip:
            return try ZipArchive.readSingleEntry(bytes, maximumBytes: maximumBytes).content
        case .encrypted:
            guard let credentials = password?.credentials() else {
                throw FormatError(
                    .wrapPasswordRequired,
                    "this file is encrypted (RNCryptor v3, Ensembles 2's encrypted cloud file system); give its password with --password-file FILE or LOGTOOL_PASSWORD",
                    location: .init(offset: 0))
            }
            return try RNCryptor.decrypt(bytes, credentials: credentials)
        }
    }

    /// Where in the layers an error lies, for messages.
    static func `where`(_ layers: [WrapperLayer]) -> String {
        guard let last = layers.last else { return "the file" }
        return "the content of the \(last == .zip ? "zip archive" : "encryption") layer (layer \(layers.count + 1))"
    }

    /// An error found inside the outer layers: the same code and offset, the layer named.
    static func inLayer(_ error: FormatError, _ layers: [WrapperLayer]) -> FormatError {
        var copy = error
        copy.message = "in \(Self.where(layers)): \(error.message)"
        return copy
    }

    /// The `file.kind-*` error of content no reader of the toolkit reads, or nil. `role` says
    /// what the file was expected to be ("an event", "a store registration").
    package static func kindError(_ kind: ContentKind, bytes: [UInt8], layers: [WrapperLayer], role: String = "an event") -> FormatError? {
        guard let code = kind.unreadableCode else { return nil }
        let place = layers.isEmpty ? "This file" : "Inside its \(layers.map(\.rawValue).joined(separator: " and ")) layers, this file"
        let advice: String
        switch kind {
        case .binaryPropertyList:
            advice =
                "is an Apple binary property list, not \(role). Ensembles 1.x wrote its cloud events as Apple Core Data binary stores, which only Apple's frameworks read; if an Ensembles 1.x app wrote this folder, read it on an Apple platform. Otherwise remove the file"
        case .xmlPropertyList:
            advice = "is an XML property list (such as a stores/ registration), not \(role): move it where it belongs or remove it"
        case .sqlite:
            advice =
                "is an SQLite database (such as an app's Core Data store or Ensembles' local event store), not \(role): it was copied here by mistake; remove it"
        default:
            advice =
                "is in no format the toolkit reads (not JSON, v2 binary, zip, RNCryptor v3, a property list or SQLite); it may be an Ensembles 1.x Core Data binary store, which only Apple's frameworks read, or a damaged upload: restore it from its writer or remove it"
        }
        return FormatError(code, "\(place) \(advice); \(firstBytesDescription(bytes))", location: .init(offset: 0))
    }
}
