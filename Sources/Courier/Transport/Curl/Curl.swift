#if os(Linux)
import CourierCurl
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// The one Swift file that calls libcurl (through the CourierCurl C target). Everything unsafe
// about it is here: raw handles, C callbacks and the pointers they carry.
//
// Why it is safe:
// - every handle is used only on the transport's loop thread, except `CurlMulti.wake()`, which
//   libcurl documents as safe from any thread (curl_multi_wakeup), and the one easy handle that
//   `CurlLibrary.takesCADirectory` makes, sets one option on and frees, within a `static let`
//   initialiser (which Swift runs once);
// - a callback's context is an unretained pointer to the `CurlExchange` set on the easy handle;
//   `CurlEasy` keeps that exchange alive (`exchange`) for as long as the handle may call it, and
//   lets go of it only after the handle has left the multi handle;
// - the buffers callbacks see are only read or written within the callback, never kept, and
//   request bodies are copied into them (`CurlBodyReader`) within their bounds;
// - the share handle (`CurlShare`) is used by the easy handles of one multi handle only, all on
//   the loop thread, and is freed only once neither the multi handle nor any easy handle holds it;
// - the presented-key buffer that libcurl's debug function writes into is the easy handle's own,
//   allocated for the handle's whole life, and written only within libcurl's calls on the loop
//   thread (in C, within its capacity); the TLS version is read from the SSL object of the
//   connection that the transfer holds at that moment (in a header callback), as a static string.

/// libcurl as loaded at run time: its version, or why it cannot be used.
enum CurlLibrary {
    /// The version of the loaded libcurl ("7.88.1"), or why the curl transport cannot be used.
    static let availability: Result<String, CurlUnavailable> = {
        var reason = [CChar](repeating: 0, count: 512)
        guard courier_curl_load(&reason, reason.count) == 0 else {
            return .failure(CurlUnavailable(reason: String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) },
                                                                     as: UTF8.self)))
        }
        return .success(String(cString: courier_curl_version()))
    }()

    /// Whether the loaded libcurl's TLS library takes a CA directory (`CURLOPT_CAPATH`; OpenSSL,
    /// GnuTLS, wolfSSL and mbedTLS do, others answer "not built in"). Asked once per process, of
    /// an easy handle made for it; false when libcurl cannot be used.
    static let takesCADirectory: Bool = {
        guard case .success = availability, let easy = CurlEasy() else { return false }
        return easy.set(.caDirectory("/")) == 0
    }()

    /// libcurl's own description of a result code.
    static func describe(_ code: Int32) -> String {
        // Loads libcurl first: its functions may be called only after a successful load.
        guard case .success = availability else { return "libcurl error \(code)" }
        return String(cString: courier_curl_easy_strerror(code))
    }
}

/// Why the curl transport cannot be used in this process.
struct CurlUnavailable: Error, Sendable, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

/// One easy handle, reused from transfer to transfer. Loop thread only.
final class CurlEasy {
    fileprivate let handle: OpaquePointer
    /// Kept alive while the handle may call it back.
    private var exchange: CurlExchange?
    private var headerList: OpaquePointer?
    /// The share handle set on this handle (`CURLOPT_SHARE`, which `curl_easy_reset` keeps);
    /// held so that it outlives the handle.
    private var share: CurlShare?
    /// libcurl writes its detailed message here when a transfer fails; it keeps the pointer.
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: COURIER_CURL_ERROR_SIZE)
    /// libcurl's debug function writes the pin of the key a server presented here, for transfers
    /// with pinned keys (`pinnedPublicKeys`); it keeps the pointer until the handle is reset.
    private let presentedKeyBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(COURIER_PUBLIC_KEY_CAPACITY))
    /// Whether libcurl decodes content codings in this transfer (`CURLOPT_HTTP_CONTENT_DECODING`,
    /// on by default); see `ContentCoding`.
    private(set) var decodesContent = true
    /// The transfer was stopped to be sent again with content decoding off (`ContentCoding`).
    var restartsUndecoded = false

    init?() {
        guard let handle = courier_curl_easy_init() else { return nil }
        self.handle = handle
        errorBuffer.initialize(repeating: 0, count: COURIER_CURL_ERROR_SIZE)
        presentedKeyBuffer.initialize(repeating: 0, count: Int(COURIER_PUBLIC_KEY_CAPACITY))
    }

    deinit {
        courier_curl_easy_cleanup(handle)
        if let headerList { courier_curl_slist_free_all(headerList) }
        errorBuffer.deallocate()
        presentedKeyBuffer.deallocate()
    }

    /// Options a transfer sets, with the value types libcurl expects.
    enum Option {
        case url(String)
        case customMethod(String)
        case noBody
        case upload(size: Int64)
        case acceptEncoding(String)
        case proxy(String)
        case credentials(user: String, password: String)
        /// The CA file (`CURLOPT_CAINFO`); nil clears libcurl's default one.
        case caFile(String?)
        /// The CA directory (`CURLOPT_CAPATH`); nil clears libcurl's default one, which, with a
        /// CA file alone, lets libcurl 7.87+ keep the parsed file in the multi handle.
        case caDirectory(String?)
        /// Waits for a connection being set up to the same origin, to learn whether it can
        /// multiplex (HTTP/2), rather than opening another (`CURLOPT_PIPEWAIT`).
        case pipeWait
        case idleTimeout(seconds: Int)
        case totalTimeout(milliseconds: Int)
        case receiveBufferSize(Int)
        /// The oldest TLS version accepted (`CURLOPT_SSLVERSION`, a `CURL_SSLVERSION_*` value).
        case minimumTLSVersion(Int)
        /// `sha256//A;sha256//B` (`CURLOPT_PINNEDPUBLICKEY`); also records the key the server
        /// presents (`presentedPublicKey`), which libcurl reports only as verbose text.
        case pinnedPublicKeys(String)
        /// PEM files of a client certificate and its key, and the key's password.
        case clientCertificate(certificate: String, key: String?, password: String?)
    }

    /// Starts from a clean handle (libcurl keeps connections in the multi handle, not here) and
    /// sets what every Courier transfer needs: no signals, no redirects followed, the exchange's
    /// callbacks, and libcurl's error message.
    func prepare(for exchange: CurlExchange) {
        courier_curl_easy_reset(handle)
        self.exchange = exchange
        exchange.easy = self
        decodesContent = true
        restartsUndecoded = false
        errorBuffer[0] = 0
        presentedKeyBuffer[0] = 0
        let context = Unmanaged.passUnretained(exchange).toOpaque()
        setLong(COURIER_CURLOPT_NOSIGNAL, 1)
        setLong(COURIER_CURLOPT_FOLLOWLOCATION, 0)
        setPointer(COURIER_CURLOPT_WRITEDATA, context)
        setPointer(COURIER_CURLOPT_HEADERDATA, context)
        setPointer(COURIER_CURLOPT_READDATA, context)
        setPointer(COURIER_CURLOPT_SEEKDATA, context)
        courier_curl_easy_setopt_callback(handle, Int32(COURIER_CURLOPT_WRITEFUNCTION), curlWriteBody)
        courier_curl_easy_setopt_callback(handle, Int32(COURIER_CURLOPT_HEADERFUNCTION), curlWriteHeader)
        courier_curl_easy_setopt_callback(handle, Int32(COURIER_CURLOPT_READFUNCTION), curlReadBody)
        // So that libcurl can send the body again: on a fresh connection when a kept-alive one
        // turns out dead, and for a Digest challenge.
        courier_curl_easy_setopt_seek_callback(handle, Int32(COURIER_CURLOPT_SEEKFUNCTION), curlSeekBody)
        setPointer(COURIER_CURLOPT_ERRORBUFFER, errorBuffer)
    }

    /// Sets an option; returns libcurl's result code (0 when it took it).
    @discardableResult
    func set(_ option: Option) -> Int32 {
        switch option {
        case .url(let url): return setString(COURIER_CURLOPT_URL, url)
        case .customMethod(let method): return setString(COURIER_CURLOPT_CUSTOMREQUEST, method)
        case .noBody: return setLong(COURIER_CURLOPT_NOBODY, 1)
        case .upload(let size):
            setLong(COURIER_CURLOPT_UPLOAD, 1)
            return courier_curl_easy_setopt_offset(handle, Int32(COURIER_CURLOPT_INFILESIZE_LARGE), size)
        case .acceptEncoding(let encodings): return setString(COURIER_CURLOPT_ACCEPT_ENCODING, encodings)
        case .proxy(let proxy): return setString(COURIER_CURLOPT_PROXY, proxy)
        case .credentials(let user, let password):
            setLong(COURIER_CURLOPT_HTTPAUTH, COURIER_CURLAUTH_BASIC | COURIER_CURLAUTH_DIGEST)
            setString(COURIER_CURLOPT_USERNAME, user)
            return setString(COURIER_CURLOPT_PASSWORD, password)
        case .caFile(let path): return path.map { setString(COURIER_CURLOPT_CAINFO, $0) } ?? setPointer(COURIER_CURLOPT_CAINFO, nil)
        case .caDirectory(let path):
            return path.map { setString(COURIER_CURLOPT_CAPATH, $0) } ?? setPointer(COURIER_CURLOPT_CAPATH, nil)
        case .pipeWait: return setLong(COURIER_CURLOPT_PIPEWAIT, 1)
        case .idleTimeout(let seconds):
            // Less than a byte per second for `seconds` ends the transfer: an idle timeout.
            setLong(COURIER_CURLOPT_LOW_SPEED_LIMIT, 1)
            return setLong(COURIER_CURLOPT_LOW_SPEED_TIME, seconds)
        case .totalTimeout(let milliseconds): return setLong(COURIER_CURLOPT_TIMEOUT_MS, milliseconds)
        case .receiveBufferSize(let bytes): return setLong(COURIER_CURLOPT_BUFFERSIZE, bytes)
        case .minimumTLSVersion(let version): return setLong(COURIER_CURLOPT_SSLVERSION, version)
        case .pinnedPublicKeys(let pins):
            // Verbose output goes to the debug function alone, which keeps one line of it.
            courier_curl_easy_capture_public_key(handle, presentedKeyBuffer)
            return setString(COURIER_CURLOPT_PINNEDPUBLICKEY, pins)
        case .clientCertificate(let certificate, let key, let password):
            let result = setString(COURIER_CURLOPT_SSLCERT, certificate)
            if let key { setString(COURIER_CURLOPT_SSLKEY, key) }
            if let password { setString(COURIER_CURLOPT_KEYPASSWD, password) }
            return result
        }
    }

    /// Turns libcurl's content decoding on or off for this transfer, even from within a callback
    /// (which libcurl before 8.5.0 honours for the body still to come; see `ContentCoding`).
    func setContentDecoding(_ on: Bool) {
        guard on != decodesContent else { return }
        decodesContent = on
        setLong(COURIER_CURLOPT_HTTP_CONTENT_DECODING, on ? 1 : 0)
    }

    /// Sets the request's header lines ("Name: value", or "Name:" to suppress one of libcurl's own).
    func setHeaders(_ lines: [String]) {
        if let headerList { courier_curl_slist_free_all(headerList) }
        headerList = nil
        for line in lines {
            guard let list = courier_curl_slist_append(headerList, line) else { continue }
            headerList = list
        }
        // libcurl keeps the list's pointer; it is freed when replaced, or with the handle.
        courier_curl_easy_setopt_pointer(handle, Int32(COURIER_CURLOPT_HTTPHEADER), UnsafeRawPointer(headerList))
    }

    /// The last response's status code (0 when none arrived).
    var responseCode: Int {
        var code = 0
        courier_curl_easy_getinfo_long(handle, Int32(COURIER_CURLINFO_RESPONSE_CODE), &code)
        return code
    }

    /// The HTTP version of the last response, once its status line was read; nil before, or for
    /// a version libcurl 7.88 does not name.
    var httpVersion: HTTPVersion? {
        var version = 0
        courier_curl_easy_getinfo_long(handle, Int32(COURIER_CURLINFO_HTTP_VERSION), &version)
        switch version {
        case COURIER_CURL_HTTP_VERSION_1_0: return .http1_0
        case COURIER_CURL_HTTP_VERSION_1_1: return .http1_1
        case COURIER_CURL_HTTP_VERSION_2_0: return .http2
        case COURIER_CURL_HTTP_VERSION_3: return .http3
        default: return nil
        }
    }

    /// The TLS version of the connection the transfer holds: only while it holds one (from a
    /// header callback), nil for plain HTTP or where libcurl's TLS library is not OpenSSL's kind.
    var connectionTLSVersion: TLSVersion? {
        courier_curl_tls_version(handle).flatMap { TLSVersion(openSSLName: String(cString: $0)) }
    }

    /// The pin of the public key the server presented ("sha256//…"), when the transfer pinned
    /// keys and made a new connection; nil otherwise (a reused connection presents none).
    var presentedPublicKey: String? {
        let text = String(cString: presentedKeyBuffer)
        return text.isEmpty ? nil : text
    }

    /// libcurl's detailed message for the last failure, if it wrote one.
    var errorMessage: String? {
        let text = String(cString: errorBuffer)
        return text.isEmpty ? nil : text
    }

    /// Lets a transfer paused by its write callback go on. libcurl may hand over the data it kept
    /// from within this call.
    func unpause() {
        courier_curl_easy_pause(handle, Int32(COURIER_CURLPAUSE_CONT))
    }

    /// Sets `share` on the handle, once: libcurl keeps it across `curl_easy_reset`. Only
    /// before the handle is added to the multi handle.
    fileprivate func use(_ share: CurlShare) {
        guard self.share !== share else { return }
        setPointer(COURIER_CURLOPT_SHARE, UnsafeMutableRawPointer(share.handle))
        self.share = share
    }

    /// Lets go of the exchange once the handle has left the multi handle and will call nothing.
    func finish() {
        exchange = nil
    }

    @discardableResult
    private func setLong(_ option: Int, _ value: Int) -> Int32 {
        courier_curl_easy_setopt_long(handle, Int32(option), value)
    }

    @discardableResult
    private func setPointer(_ option: Int, _ value: UnsafeMutableRawPointer?) -> Int32 {
        courier_curl_easy_setopt_pointer(handle, Int32(option), value)
    }

    /// libcurl copies strings it is given (since 7.17), so a temporary C string is enough.
    @discardableResult
    private func setString(_ option: Int, _ value: String) -> Int32 {
        courier_curl_easy_setopt_string(handle, Int32(option), value)
    }
}

/// TLS sessions and DNS answers shared by every easy handle of one transport, so that a new
/// connection (another handle, a reconnection after the server closed one, the connections of a
/// burst) resumes a TLS session instead of making a full handshake. Sessions never skip
/// verification: a resumed session is only offered to the same host and port, with the same
/// verification settings, and a server that does not resume it gets a full, verified handshake.
///
/// No lock callbacks (`CURLSHOPT_LOCKFUNC`): libcurl then shares without locking, which is right
/// only when one thread uses every handle set to the share, as here: the share belongs to one
/// multi handle, whose easy handles are all driven by the transport's loop thread.
final class CurlShare {
    fileprivate let handle: OpaquePointer

    init?() {
        guard let handle = courier_curl_share_init() else { return nil }
        self.handle = handle
        courier_curl_share_share(handle, Int32(COURIER_CURL_LOCK_DATA_SSL_SESSION))
        courier_curl_share_share(handle, Int32(COURIER_CURL_LOCK_DATA_DNS))
    }

    deinit {
        // Runs once neither the multi handle nor any easy handle holds the share (each holds it
        // strongly), so libcurl never sees it in use here.
        courier_curl_share_cleanup(handle)
    }
}

/// The multi handle that drives every transfer of one transport. Loop thread only, but for `wake`.
final class CurlMulti {
    private let handle: OpaquePointer
    /// Set on every easy handle this multi handle runs; freed after it (see `deinit`).
    private let share: CurlShare?

    init?(maximumConnectionsPerHost: Int, connectionCache: Int) {
        guard let handle = courier_curl_multi_init() else { return nil }
        self.handle = handle
        // Without one, transfers still work, each handle keeping its own sessions.
        share = CurlShare()
        courier_curl_multi_setopt_long(handle, Int32(COURIER_CURLMOPT_MAX_HOST_CONNECTIONS), maximumConnectionsPerHost)
        // Sized so that the end of a burst does not close the connections it opened.
        courier_curl_multi_setopt_long(handle, Int32(COURIER_CURLMOPT_MAXCONNECTS), connectionCache)
    }

    deinit {
        // The connections close here; the share is let go of only after this (stored
        // properties are released after the body of deinit).
        courier_curl_multi_cleanup(handle)
    }

    /// A waker for other threads.
    var waker: CurlWaker { CurlWaker(handle: handle) }

    func add(_ easy: CurlEasy) -> Int32 {
        if let share { easy.use(share) }
        return courier_curl_multi_add_handle(handle, easy.handle)
    }

    func remove(_ easy: CurlEasy) {
        courier_curl_multi_remove_handle(handle, easy.handle)
    }

    /// Moves every transfer on as far as it can go without waiting.
    func perform() {
        var running: Int32 = 0
        courier_curl_multi_perform(handle, &running)
    }

    /// Waits for network activity, a wake-up or the timeout.
    func poll(timeoutMilliseconds: Int32) {
        courier_curl_multi_poll(handle, timeoutMilliseconds, nil)
    }

    /// Whether a transfer's socket has activity now (without waiting; a pending wake-up is
    /// consumed, and not counted).
    func hasActivity() -> Bool {
        var ready: Int32 = 0
        courier_curl_multi_poll(handle, 0, &ready)
        return ready > 0
    }

    /// The next finished transfer's handle (as an identity to look up) and result code.
    func nextFinished() -> (ObjectIdentifierOfEasy, Int32)? {
        var easy: OpaquePointer?
        var result: Int32 = 0
        guard courier_curl_multi_next_done(handle, &easy, &result) == 1, let easy else { return nil }
        return (ObjectIdentifierOfEasy(pointer: easy), result)
    }
}

/// Names an easy handle by its address, to find its exchange when it finishes.
struct ObjectIdentifierOfEasy: Hashable {
    fileprivate let pointer: OpaquePointer

    init(_ easy: CurlEasy) {
        pointer = easy.handle
    }

    fileprivate init(pointer: OpaquePointer) {
        self.pointer = pointer
    }
}

/// Wakes the loop thread from any thread: the one libcurl call other threads make.
struct CurlWaker: @unchecked Sendable {
    // @unchecked: an OpaquePointer is not Sendable, but curl_multi_wakeup is documented as safe
    // from any thread, and the multi handle outlives every waker (the loop ends only after the
    // transport stopped handing wakers out and drained its work).
    fileprivate let handle: OpaquePointer

    func wake() {
        courier_curl_multi_wakeup(handle)
    }
}

// MARK: - Callbacks

private func handler(_ context: UnsafeMutableRawPointer?) -> CurlExchange {
    Unmanaged<CurlExchange>.fromOpaque(context!).takeUnretainedValue()
}

private let curlWriteBody: CourierCurlDataCallback = { buffer, size, count, context in
    let length = size * count
    switch handler(context).receiveBody(UnsafeRawBufferPointer(start: buffer, count: length)) {
    case .taken: return length
    // libcurl keeps these bytes and hands them over again once the transfer is unpaused.
    case .pause: return COURIER_CURL_WRITEFUNC_PAUSE
    case .stop: return 0
    }
}

private let curlWriteHeader: CourierCurlDataCallback = { buffer, size, count, context in
    let length = size * count
    guard handler(context).receiveHeaderLine(UnsafeRawBufferPointer(start: buffer, count: length)) else { return 0 }
    return length
}

private let curlSeekBody: CourierCurlSeekCallback = { context, offset, origin in
    // libcurl rewinds from the start only (SEEK_SET).
    guard origin == SEEK_SET, handler(context).rewindBody(to: offset) else { return Int32(COURIER_CURL_SEEKFUNC_CANTSEEK) }
    return Int32(COURIER_CURL_SEEKFUNC_OK)
}

private let curlReadBody: CourierCurlDataCallback = { buffer, size, count, context in
    guard let read = handler(context).readBody(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count)) else {
        return COURIER_CURL_READFUNC_ABORT
    }
    return read
}

// MARK: - Request bodies

/// Reads a request body into libcurl's buffer: from memory, or from a file without loading it.
struct CurlBodyReader {
    private enum Source {
        case none
        case data(Data, offset: Int)
        case file(descriptor: Int32, path: String)
    }

    private var source: Source
    /// Why the last read failed, for the error message.
    private(set) var failureDescription = ""
    /// A file body was read to its end (since the last seek).
    private var fileEnded = false

    /// No body.
    init() {
        source = .none
    }

    init(data: Data) {
        source = .data(data, offset: 0)
    }

    /// Opens `file`; nil when it cannot be opened (the reason is in `openError`).
    init?(file: URL, openError: inout String) {
        let descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            openError = String(cString: strerror(errno))
            return nil
        }
        source = .file(descriptor: descriptor, path: file.path)
    }

    /// Copies the next bytes into `buffer`: how many (0 at the end), or nil on a read error.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        switch source {
        case .none:
            return 0
        case .data(let data, let offset):
            let count = min(buffer.count, data.count - offset)
            guard count > 0 else { return 0 }
            data.withUnsafeBytes { bytes in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
            }
            source = .data(data, offset: offset + count)
            return count
        case .file(let descriptor, let path):
            while true {
                let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
                if count == 0 { fileEnded = true }
                if count >= 0 { return count }
                if errno == EINTR { continue }
                failureDescription = " from \(path): \(String(cString: strerror(errno)))"
                return nil
            }
        }
    }

    /// Moves to `offset` from the start, so that libcurl can send the body again.
    mutating func seek(to offset: Int64) -> Bool {
        switch source {
        case .none:
            return offset == 0
        case .data(let data, _):
            guard offset >= 0, offset <= Int64(data.count) else { return false }
            source = .data(data, offset: Int(offset))
            return true
        case .file(let descriptor, _):
            fileEnded = false
            return lseek(descriptor, off_t(offset), SEEK_SET) == off_t(offset)
        }
    }

    /// Whether libcurl has had the whole body (true without one).
    var isRead: Bool {
        switch source {
        case .none: true
        case .data(let data, let offset): offset >= data.count
        case .file: fileEnded
        }
    }

    /// Closes the file, if any; idempotent.
    mutating func close() {
        if case .file(let descriptor, _) = source { Glibc.close(descriptor) }
        source = .none
    }
}
#endif
