import Foundation
import Testing
@testable import RemoteFolder

/// The S3 request signer against AWS's published worked examples (Spec/remote.md 11.3): the
/// S3 documentation's GET Object example (with its canonical request's hash) and a vector of
/// the Signature Version 4 test suite (query parameters out of order, another service).
@Suite("AWS Signature Version 4")
struct SignatureV4Tests {
    static let date = Date(timeIntervalSince1970: 1_369_353_600)  // 2013-05-24T00:00:00Z

    @Test("the S3 documentation's GET Object example: canonical request, signature and Authorization header")
    func getObject() {
        let signer = SignatureV4(accessKey: "AKIAIOSFODNN7EXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", region: "us-east-1")
        #expect(SignatureV4.timestamp(Self.date) == "20130524T000000Z")
        let headers = [("Host", "examplebucket.s3.amazonaws.com"), ("Range", "bytes=0-9")]
        let added = signer.signedHeaders(method: "GET", path: "/test.txt", query: [], headers: headers, date: Self.date)
        #expect(added.first { $0.0 == "x-amz-content-sha256" }?.1 == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            added.first { $0.0 == "Authorization" }?.1
                == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        )
        let canonical = SignatureV4.canonicalRequest(
            method: "GET", path: "/test.txt", query: [], headers: headers + added.filter { $0.0 != "Authorization" },
            payloadHash: SignatureV4.emptyPayloadHash)
        #expect(SignatureV4.sha256Hex(canonical.request) == "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972")
    }

    @Test("a test-suite vector: query parameters sorted by name, a service other than S3 (no content hash header)")
    func queryOrder() {
        let signer = SignatureV4(accessKey: "AKIDEXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", region: "us-east-1", service: "service")
        let result = signer.sign(
            method: "GET", path: "/", query: [("Param2", "value2"), ("Param1", "value1")],
            headers: [("Host", "example.amazonaws.com"), ("X-Amz-Date", "20150830T123600Z")], payloadHash: SignatureV4.emptyPayloadHash,
            timestamp: "20150830T123600Z")
        #expect(result.signedHeaders == "host;x-amz-date")
        #expect(result.signature == "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500")
    }

    @Test("URI encoding keeps only the unreserved characters, in uppercase hex; a session token is signed")
    func encodingAndToken() {
        #expect(SignatureV4.uriEncode("a b/ü~-._") == "a%20b%2F%C3%BC~-._")
        let plain = SignatureV4(accessKey: "A", secretKey: "S", region: "us-east-1")
        var withToken = plain
        withToken.sessionToken = "TOKEN"
        let headers = [("Host", "h")]
        let one = plain.signedHeaders(method: "GET", path: "/k", query: [], headers: headers, date: Self.date)
        let two = withToken.signedHeaders(method: "GET", path: "/k", query: [], headers: headers, date: Self.date)
        #expect(two.contains { $0 == ("x-amz-security-token", "TOKEN") })
        #expect(two.first { $0.0 == "Authorization" }?.1.contains("x-amz-security-token") == true)
        #expect(one.first { $0.0 == "Authorization" }?.1 != two.first { $0.0 == "Authorization" }?.1)
    }
}
