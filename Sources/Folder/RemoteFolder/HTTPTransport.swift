import Foundation
import JSONDocument

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension FormatError.Code {
    /// The server answered with a status that is not success (401, 403, 404, 500, ...).
    package static let remoteHTTPStatus = Self("remote.http-status")
    /// No connection, or it broke before the answer was complete.
    package static let remoteConnection = Self("remote.connection")
    /// A request took longer than its timeout (Spec/remote.md 6).
    package static let remoteTimeout = Self("remote.timeout")
    /// A redirect to another scheme, host or port, or too many redirects (Spec/remote.md 6).
    package static let remoteRedirectRefused = Self("remote.redirect-refused")
    /// A body larger than the limit of what it is (Spec/remote.md 6) was not downloaded.
    package static let remoteTooLarge = Self("remote.too-large")
    /// A file of the snapshot could not be written (the code every command uses for that).
    static let localWriteFailed = Self("file.write-failed")
}

/// HTTP requests for the remote readers, one at a time per calling thread.
///
/// The client is Foundation's `URLSession` (on Linux FoundationNetworking over libcurl), not
/// swift-server/async-http-client, by measurement (Spec/remote.md 8): a scratch package of one
/// GET built clean (debug) in 21 s with URLSession, which the toolkit's Foundation already holds,
/// and in 1,307 s with async-http-client 1.37.0 (22 packages: SwiftNIO, NIOSSL with BoringSSL,
/// HTTP/2, certificates, and swift-crypto, which the toolkit builds already), both on this 2-core machine at a load of about 7 (three builds at once; the machine
/// notes give 2.5-4.5 minutes on a quiet one), which CI would pay again on every run. Both
/// can keep the safety rules (checked here against a loopback server for URLSession):
/// - redirects: the delegate answers every redirect with nil, so URLSession hands back the 3xx
///   answer itself, and ``perform(_:origin:file:)`` follows it only on the same scheme, host and
///   port (async-http-client can refuse redirects with `.disallow` and do the same);
/// - timeouts: `timeoutIntervalForRequest` ends a request that receives nothing for that long
///   (error -1001 against a server that stalls mid-body); URLSession on Linux does not enforce
///   `timeoutIntervalForResource` (a server sending a byte every half second ran past it), so
///   the total limit is a watchdog here that cancels the task (async-http-client has both);
/// - TLS: libcurl with OpenSSL checks the server's certificate and name against the system's
///   trust store, as NIOSSL does; nothing here turns that off.
/// Tasks are created without completion handlers, so that every event, redirects and
/// authentication challenges included, passes through the delegate.
final class HTTPTransport: @unchecked Sendable {
    struct Request {
        var method: String
        var url: URL
        var headers: [String: String] = [:]
        var body: Data?
        /// Where the body of a successful answer goes.
        var sink: Sink
        /// The largest body accepted; a larger one is refused unread, or cut off and refused.
        var limit: Int64
    }

    enum Sink {
        case memory
        case file(FileHandle)
    }

    struct Response {
        var status: Int
        /// Header names in lower case.
        var headers: [String: String]
        /// The body when the sink is memory (and of an error answer, its first 64 KiB).
        var body: Data
        var bytes: Int64
        /// The URL answered: the one asked for, or where same-origin redirects led.
        var url: URL
    }

    /// The time a request may receive nothing, and its whole time (Spec/remote.md 6).
    let idleTimeout: TimeInterval
    let totalTimeout: TimeInterval
    let authenticator: Authenticator
    /// Signs every request (S3, Spec/remote.md 11.3); nil sends requests unsigned.
    let signer: SignatureV4?
    private let session: URLSession
    private let delegate: Delegate
    /// What a request's answer is reported against: the folder's URL as given (no credentials).
    let displayName: String

    init(idleTimeout: TimeInterval, totalTimeout: TimeInterval, credentials: RemoteCredentials?, signer: SignatureV4? = nil, displayName: String) {
        self.signer = signer
        self.idleTimeout = idleTimeout
        self.totalTimeout = totalTimeout
        self.displayName = displayName
        authenticator = Authenticator(credentials)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = idleTimeout
        configuration.timeoutIntervalForResource = totalTimeout
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = 8
        delegate = Delegate()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    deinit { session.invalidateAndCancel() }

    /// Performs `request`, answering one authentication challenge and following redirects on
    /// the same origin (at most 5; none when `followRedirects` is false). `origin` decides what
    /// the same origin is. A status that is not 2xx is returned, not thrown; the caller names it.
    func perform(_ request: Request, origin: RemoteLocation, file: String, followRedirects: Bool = true) throws(FormatError) -> Response {
        var current = request
        var redirects = 0
        var authenticated = false
        while true {
            let response = try performOnce(current, file: file)
            if response.status == 401, !authenticated, let challenge = response.headers["www-authenticate"], authenticator.accept(challenges: challenge) {
                authenticated = true
                try rewind(current.sink, file: file)
                continue
            }
            if [301, 302, 303, 307, 308].contains(response.status) {
                guard let location = response.headers["location"], let target = URL(string: location, relativeTo: current.url)?.absoluteURL else {
                    // S3 answers a request to the wrong region's endpoint so, naming the bucket's
                    // region in a header (Spec/remote.md 11.2).
                    let region = response.headers["x-amz-bucket-region"].map { " (the bucket is in \($0): --region \($0))" } ?? ""
                    throw FormatError(.remoteRedirectRefused, "a redirect without a usable Location\(region)", location: .init(file: file))
                }
                guard followRedirects else {
                    throw FormatError(.remoteRedirectRefused, "a presigned URL redirects; it is not followed", location: .init(file: file))
                }
                guard origin.isSameOrigin(target) else {
                    throw FormatError(
                        .remoteRedirectRefused, "the server redirects to another host (\(target.host ?? "?")); only redirects on the same host are followed",
                        location: .init(file: file))
                }
                redirects += 1
                guard redirects <= 5 else { throw FormatError(.remoteRedirectRefused, "more than 5 redirects", location: .init(file: file)) }
                current.url = target
                try rewind(current.sink, file: file)
                continue
            }
            var answered = response
            answered.url = current.url
            return answered
        }
    }

    private func rewind(_ sink: Sink, file: String) throws(FormatError) {
        guard case .file(let handle) = sink else { return }
        do {
            try handle.truncate(atOffset: 0)
            try handle.seek(toOffset: 0)
        } catch {
            throw FormatError(.localWriteFailed, "the staged file could not be emptied: \(error)", location: .init(file: file))
        }
    }

    private func performOnce(_ request: Request, file: String) throws(FormatError) -> Response {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: idleTimeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if let authorization = authenticator.authorization(method: request.method, url: request.url) {
            urlRequest.setValue(authorization, forHTTPHeaderField: "Authorization")
        }
        if let signer {
            // Signed as sent: each attempt (a redirect too) at the time it is sent.
            for (name, value) in Self.signature(signer, method: request.method, url: request.url, date: Date()) {
                urlRequest.setValue(value, forHTTPHeaderField: name)
            }
        }
        urlRequest.httpBody = request.body
        let state = TaskState(sink: request.sink, limit: request.limit)
        let task = session.dataTask(with: urlRequest)
        delegate.register(state, for: task.taskIdentifier)
        task.resume()
        if state.done.wait(timeout: .now() + totalTimeout) == .timedOut {
            state.markTimedOut()
            task.cancel()
            _ = state.done.wait(timeout: .now() + 5)
            delegate.forget(task.taskIdentifier)
            throw FormatError(.remoteTimeout, "the request took longer than \(Int(totalTimeout)) s in all", location: .init(file: file))
        }
        delegate.forget(task.taskIdentifier)
        return try state.result(file: file, idleTimeout: idleTimeout)
    }

    /// The headers that sign a request for `url` (remote.md 11.3): its path and query decoded
    /// and encoded again as the signer does (the URLs are built so that this is what is sent),
    /// and the `Host` the client sends (the port only when it is not the scheme's default).
    static func signature(_ signer: SignatureV4, method: String, url: URL, date: Date) -> [(String, String)] {
        let path = url.path(percentEncoded: true).split(separator: "/", omittingEmptySubsequences: false)
            .map { String($0).removingPercentEncoding ?? String($0) }.joined(separator: "/")
        let query: [(String, String)] = (url.query(percentEncoded: true) ?? "").split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
            return (name, value)
        }
        var host = url.host(percentEncoded: true) ?? ""
        if let port = url.port, port != (url.scheme?.lowercased() == "https" ? 443 : 80) { host += ":\(port)" }
        return signer.signedHeaders(method: method, path: path.isEmpty ? "/" : path, query: query, headers: [("Host", host)], date: date)
    }

    /// What one task has received so far; filled on the delegate's queue.
    final class TaskState: @unchecked Sendable {
        let sink: Sink
        let limit: Int64
        let done = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        var status = 0
        var headers: [String: String] = [:]
        var body = Data()
        var bytes: Int64 = 0
        var expected: Int64 = -1
        var failure: FormatError?
        var error: Error?
        var timedOut = false

        init(sink: Sink, limit: Int64) {
            self.sink = sink
            self.limit = limit
        }

        /// The answer was a 401 whose challenge the delegate cancelled: the cancel ends a
        /// complete answer, not a failed request.
        private var challenged = false

        func markChallenged() {
            lock.lock()
            challenged = true
            lock.unlock()
        }

        func markTimedOut() {
            lock.lock()
            timedOut = true
            lock.unlock()
        }

        var isSuccess: Bool { (200..<300).contains(status) }

        func result(file: String, idleTimeout: TimeInterval) throws(FormatError) -> Response {
            lock.lock()
            defer { lock.unlock() }
            if let failure { throw failure.inFile(file) }
            if let error, !(challenged && status == 401 && (error as NSError).code == NSURLErrorCancelled) {
                let code = (error as NSError).code
                if code == NSURLErrorTimedOut {
                    throw FormatError(.remoteTimeout, "the server sent nothing for \(Int(idleTimeout)) s", location: .init(file: file))
                }
                if code == NSURLErrorCancelled { throw FormatError(.remoteConnection, "the request was cancelled", location: .init(file: file)) }
                let detail = (error as NSError).userInfo[NSUnderlyingErrorKey].map { ($0 as? NSError)?.localizedDescription ?? "" } ?? ""
                throw FormatError(
                    .remoteConnection, "the connection failed (URLError \(code)\(detail.isEmpty ? "" : ": " + detail))", location: .init(file: file))
            }
            if isSuccess, expected >= 0, bytes != expected {
                throw FormatError(.remoteConnection, "the body ended after \(bytes) of \(expected) bytes", location: .init(file: file))
            }
            return Response(status: status, headers: headers, body: body, bytes: bytes, url: URL(fileURLWithPath: "/"))
        }

        func receive(_ response: URLResponse) -> Bool {
            lock.lock()
            defer { lock.unlock() }
            guard let http = response as? HTTPURLResponse else {
                failure = FormatError(.remoteConnection, "the answer is not HTTP")
                return false
            }
            status = http.statusCode
            for (name, value) in http.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
            }
            expected = http.expectedContentLength
            if isSuccess, expected > limit {
                failure = FormatError(.remoteTooLarge, "the server announces \(expected) bytes, more than the limit of \(limit); not downloaded")
                return false
            }
            return true
        }

        func receive(_ data: Data) -> Bool {
            lock.lock()
            defer { lock.unlock() }
            bytes += Int64(data.count)
            guard isSuccess else {
                // An error answer's body is kept only in part: it is never the content asked for.
                if body.count < 65536 { body.append(data.prefix(65536 - body.count)) }
                return true
            }
            if bytes > limit {
                failure = FormatError(.remoteTooLarge, "the body is larger than the limit of \(limit) bytes; not downloaded")
                return false
            }
            switch sink {
            case .memory: body.append(data)
            case .file(let handle):
                do { try handle.write(contentsOf: data) } catch {
                    failure = FormatError(.localWriteFailed, "the staged file could not be written: \(error)")
                    return false
                }
            }
            return true
        }

        func complete(_ error: Error?) {
            lock.lock()
            if failure == nil, let error { self.error = error }
            lock.unlock()
            done.signal()
        }
    }

    /// The session's delegate: routes each task's events to its state.
    final class Delegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        private let lock = NSLock()
        private var states: [Int: TaskState] = [:]

        func register(_ state: TaskState, for task: Int) {
            lock.lock()
            states[task] = state
            lock.unlock()
        }

        func forget(_ task: Int) {
            lock.lock()
            states[task] = nil
            lock.unlock()
        }

        private func state(_ task: URLSessionTask) -> TaskState? {
            lock.lock()
            defer { lock.unlock() }
            return states[task.taskIdentifier]
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
            completionHandler: @escaping (URLRequest?) -> Void
        ) {
            // Never followed here: the 3xx answer goes back to perform(_:), which checks the host.
            completionHandler(nil)
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
        ) {
            let keep = state(dataTask)?.receive(response) ?? false
            completionHandler(keep ? .allow : .cancel)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            if state(dataTask)?.receive(data) == false { dataTask.cancel() }
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            #if !canImport(FoundationNetworking)
            // Certificate checks stay as the system does them (Spec/remote.md 6); on Linux
            // libcurl makes them and no such challenge comes.
            if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust {
                return completionHandler(.performDefaultHandling, nil)
            }
            #endif
            // A 401: its answer goes back to perform(_:), which answers the challenge itself
            // (Spec/remote.md 7). URLSession's own handling, with no credential stored, never
            // completes the task on Linux; cancelling it here hands back the 401 received.
            state(task)?.markChallenged()
            completionHandler(.cancelAuthenticationChallenge, nil)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
            state(task)?.complete(error)
        }
    }
}
