#if os(Linux)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The thread that drives the curl transport's one multi handle, the way curl's own `--parallel`
/// does: move every transfer on (`perform`), hand over the finished ones, then wait for the
/// network, a timeout or a wake-up (`poll`).
///
/// Other threads never touch libcurl: they put commands in the inbox and wake the loop with
/// `curl_multi_wakeup`, the one call libcurl allows from any thread. Completions are handed over
/// on the loop (`TransportHandOver`): the queue finishes a request here only when nothing but its
/// own code and a small body's decoding runs, and moves the rest to its work queue; no observer or
/// delegate ever runs on this thread.
final class CurlLoop: Sendable {
    enum Command: Sendable {
        case start(CurlTransfer)
        case cancel(CurlTransfer)
        /// A streamed transfer's receiver wants more after a pause.
        case resumeDelivery(CurlTransfer)
    }

    fileprivate struct Inbox {
        var commands: [Command] = []
        /// Set by the loop once its multi handle exists.
        var waker: CurlWaker?
        var stopped = false
        /// The loop is waiting awake (`CurlEngine.waitAwake`): the first command sets `arrived`
        /// instead of waking it.
        var loopIsAwake = false
    }

    private let inbox = Locked(Inbox())
    /// Set by `submit` for a loop that waits awake, which reads it without the lock.
    private let arrived = Flag()

    init(options: CurlOptions) {
        let inbox = self.inbox
        let arrived = self.arrived
        let thread = Thread {
            // The engine and its handles are made, used and freed on this thread only.
            CurlEngine(options: options, inbox: inbox, arrived: arrived).run()
        }
        thread.name = "Courier.curl"
        thread.start()
    }

    /// Hands a command to the loop. Returns false when the loop has stopped.
    func submit(_ command: Command) -> Bool {
        // The wake-up is made under the lock: the loop drops its waker under the same lock
        // before it frees the multi handle, so no wake-up can reach a freed handle. Only the
        // first command of a batch wakes the loop: the loop takes the whole inbox at once, and
        // the wake-up stays pending in libcurl until its next poll, so later commands ride on it
        // (at 16 in flight this halved the wake-ups, each a system call on both sides).
        inbox.withLock { inbox in
            guard !inbox.stopped else { return false }
            inbox.commands.append(command)
            if inbox.commands.count == 1 {
                if inbox.loopIsAwake { arrived.raise() } else { inbox.waker?.wake() }
            }
            return true
        }
    }

    /// Ends every transfer with ``RequestError/cancelled`` and stops the thread.
    func stop() {
        inbox.withLock { inbox in
            inbox.stopped = true
            if inbox.loopIsAwake { arrived.raise() }
            inbox.waker?.wake()
        }
    }

    /// The loop thread's side.
    fileprivate final class CurlEngine {
        private struct Running {
            let easy: CurlEasy
            let exchange: CurlExchange
        }

        private let options: CurlOptions
        private let inbox: Locked<Inbox>
        // Unchecked: only the loop thread touches these, one call at a time (libcurl's callbacks
        // do not reach them); the runtime's check costs two calls and a thread-local lookup each.
        @exclusivity(unchecked) private var running: [ObjectIdentifierOfEasy: Running] = [:]
        @exclusivity(unchecked) private var byTransfer: [ObjectIdentifier: ObjectIdentifierOfEasy] = [:]
        /// Easy handles kept for reuse.
        @exclusivity(unchecked) private var idle: [CurlEasy] = []

        private let arrived: Flag

        init(options: CurlOptions, inbox: Locked<Inbox>, arrived: Flag) {
            self.options = options
            self.inbox = inbox
            self.arrived = arrived
        }

        func run() {
            // The connection cache outlives bursts: curl's default (4 × the handles in use)
            // would close kept-alive connections every time a burst ends.
            guard let multi = CurlMulti(maximumConnectionsPerHost: options.maximumConnectionsPerHost,
                                        connectionCache: max(64, 4 * options.maximumConnectionsPerHost)) else {
                return failEverything(with: CurlErrors.error(code: 2, message: "curl_multi_init failed", url: nil))
            }
            inbox.withLock { $0.waker = multi.waker }
            while true {
                let stopped = runCommands(on: multi)
                if stopped { return shutDown(multi) }
                var handedOver = false
                if !running.isEmpty {
                    multi.perform()
                    // One hand-over for every transfer that ended in this pass (`TransportHandOver`).
                    TransportHandOver.run {
                        while let (id, code) = multi.nextFinished() {
                            finish(id, code: code, on: multi)
                            handedOver = true
                        }
                    }
                }
                if handedOver, running.isEmpty, waitAwake(watching: nil) { continue }
                let waitsForHead = running.count == 1 && running.first?.value.exchange.awaitsResponseHead == true
                if headWait.waitsAwake(awaitsHead: waitsForHead) {
                    if waitAwake(watching: multi) { continue }
                    headWait.awakeWaitEndedEmpty()
                }
                let sleep = waitsForHead ? DispatchTime.now().uptimeNanoseconds : 0
                // libcurl shortens the wait to its own next timeout; a wake-up ends it at once.
                multi.poll(timeoutMilliseconds: running.isEmpty ? 60_000 : 1_000)
                if waitsForHead { headWait.slept(from: sleep, to: DispatchTime.now().uptimeNanoseconds) }
            }
        }

        /// Whether the loop waits awake for a lone transfer's response head (``HeadWait``).
        @exclusivity(unchecked) private var headWait = HeadWait()

        /// Whether the loop may wait awake: with one CPU, the threads it waits for (the caller's,
        /// the server's if it is local) could only run once it stops.
        private let mayWaitAwake = ProcessInfo.processInfo.activeProcessorCount > 1

        /// Waits awake, up to ``HeadWait/awakeWait`` (0.1 ms), for what usually comes next when one
        /// request at a time is on the wire: the caller's next command once the last transfer has ended
        /// (`watching` nil), or activity on the sockets of the one running transfer once its
        /// request is sent and it waits for the response head (`watching` the multi handle); true
        /// when it came. Sleeping in `poll` instead costs a wake-up of this thread, and on a 2-core
        /// VM, whose idle vCPUs halt, a wake-up took 25–35 µs: for a small response from a nearby
        /// server, as long as the server took to answer. Waiting awake for the command cut context
        /// switches one at a time from 3.3 to 2.1 a request; for the response head too, one at a
        /// time `send` went from 0.68 to 1.0 × curl's command line (which sleeps in `poll` for each
        /// response), with less CPU a request (Benchmarks/ANALYSIS.md, #20).
        ///
        /// Never while a body streams in or out, nor with more than one transfer running: packets
        /// or responses that come every few tenths of a millisecond would keep the loop spinning
        /// most of the time. (At 16 in flight against a server on the same machine, waiting awake
        /// gave `send` 10 % more throughput, but a far server's responses would arrive at just
        /// such intervals.) The loop waits awake for a head only while heads have come quickly
        /// (``HeadWait``): for a far server, once, then it sleeps until one comes quickly again.
        private func waitAwake(watching multi: CurlMulti?) -> Bool {
            guard mayWaitAwake else { return false }
            let pending = inbox.withLock { inbox in
                guard inbox.commands.isEmpty, !inbox.stopped else { return true }
                inbox.loopIsAwake = true
                arrived.lower()
                return false
            }
            if pending { return true }
            let deadline = DispatchTime.now().uptimeNanoseconds &+ HeadWait.awakeWait
            var active = false
            // A command that comes meanwhile raises `arrived` rather than waking the multi handle
            // (`submit`); `hasActivity` would consume that wake-up, not count it.
            while !arrived.isRaised, !active, DispatchTime.now().uptimeNanoseconds < deadline {
                active = multi?.hasActivity() ?? false
            }
            return inbox.withLock { inbox in
                inbox.loopIsAwake = false
                return active || !inbox.commands.isEmpty || inbox.stopped
            }
        }

        /// Carries out the commands in the inbox; true once the transport has stopped. The
        /// commands are let go of on return, not kept while the loop waits in `poll`.
        private func runCommands(on multi: CurlMulti) -> Bool {
            let (commands, stopped) = inbox.withLock { inbox in
                defer { inbox.commands = [] }
                return (inbox.commands, inbox.stopped)
            }
            for command in commands {
                switch command {
                case .start(let transfer): start(transfer, on: multi)
                case .cancel(let transfer): cancel(transfer, on: multi)
                case .resumeDelivery(let transfer): resumeDelivery(transfer)
                }
            }
            return stopped
        }

        private func start(_ transfer: CurlTransfer, on multi: CurlMulti, decodingContent: Bool = true) {
            guard !transfer.isCancelled else { return transfer.complete(.failure(.cancelled)) }
            guard let easy = idle.popLast() ?? CurlEasy() else {
                return transfer.complete(.failure(CurlErrors.error(code: 2, message: "curl_easy_init failed",
                                                                  url: transfer.request.urlRequest.url)))
            }
            let exchange: CurlExchange
            switch CurlSetup.configure(easy, for: transfer, options: options, decodingContent: decodingContent) {
            case .success(let configured): exchange = configured
            case .failure(let error):
                recycle(easy)
                return transfer.complete(.failure(error))
            }
            let code = multi.add(easy)
            guard code == 0 else {
                exchange.close()
                recycle(easy)
                return transfer.complete(.failure(CurlErrors.error(code: 2, message: "curl_multi_add_handle failed with \(code)",
                                                                  url: transfer.request.urlRequest.url)))
            }
            let id = ObjectIdentifierOfEasy(easy)
            running[id] = Running(easy: easy, exchange: exchange)
            byTransfer[ObjectIdentifier(transfer)] = id
        }

        private func cancel(_ transfer: CurlTransfer, on multi: CurlMulti) {
            guard let id = byTransfer.removeValue(forKey: ObjectIdentifier(transfer)),
                  let entry = running.removeValue(forKey: id) else { return }
            multi.remove(entry.easy)
            entry.exchange.close()
            recycle(entry.easy)
            transfer.complete(.failure(.cancelled))
        }

        private func resumeDelivery(_ transfer: CurlTransfer) {
            guard let id = byTransfer[ObjectIdentifier(transfer)], let entry = running[id] else { return }
            if entry.exchange.resumeDelivery() { entry.easy.unpause() }
        }

        private func finish(_ id: ObjectIdentifierOfEasy, code: Int32, on multi: CurlMulti) {
            guard let entry = running.removeValue(forKey: id) else { return }
            byTransfer[ObjectIdentifier(entry.exchange.transfer)] = nil
            multi.remove(entry.easy)
            let result = entry.exchange.result(code: code, easy: entry.easy)
            let restart = entry.easy.restartsUndecoded
            recycle(entry.easy)
            // Stopped at the end of a head in a coding libcurl 8.5+ cannot pass through: nothing
            // was delivered, and the GET goes out once more with decoding off (`ContentCoding`).
            if restart { return start(entry.exchange.transfer, on: multi, decodingContent: false) }
            entry.exchange.transfer.complete(result)
        }

        private func recycle(_ easy: CurlEasy) {
            easy.finish()
            if idle.count < 64 { idle.append(easy) }
        }

        private func shutDown(_ multi: CurlMulti) {
            for (_, entry) in running {
                multi.remove(entry.easy)
                entry.exchange.close()
                entry.easy.finish()
                entry.exchange.transfer.complete(.failure(.cancelled))
            }
            running = [:]
            byTransfer = [:]
            idle = []
            failEverything(with: .cancelled)
        }

        /// Ends whatever is still in the inbox, and refuses what comes later.
        private func failEverything(with error: RequestError) {
            let commands = inbox.withLock { inbox in
                inbox.stopped = true
                inbox.waker = nil
                defer { inbox.commands = [] }
                return inbox.commands
            }
            for case .start(let transfer) in commands { transfer.complete(.failure(error)) }
        }
    }
}
/// A flag one thread raises and another reads without a lock.
fileprivate final class Flag: Sendable {
    private let value = Atomic<Bool>(false)

    func raise() { value.store(true, ordering: .releasing) }
    func lower() { value.store(false, ordering: .releasing) }
    var isRaised: Bool { value.load(ordering: .acquiring) }
}
#endif
