import XCTest
@testable import Courier

/// The order of progress reports when a poll and the final report cross on the callback queue.
final class ProgressObserverTests: XCTestCase {
    private func progress(_ received: Int64) -> TransferProgress {
        TransferProgress(bytesReceived: received, totalBytesToReceive: 100)
    }

    func testAPollQueuedBeforeTheEndButRunAfterTheFinalReportIsDropped() {
        // Given a poll that chose 40 bytes, then the transfer ended at 100
        let reports = Recorder<Int64>()
        let observer = ProgressObserver(interval: 0) { reports.append($0.bytesReceived) }
        XCTAssertTrue(observer.wants(progress(40), now: 1))

        // When the final report runs before the poll's report
        observer.report(progress(100), force: true)
        observer.report(progress(40))

        // Then progress never goes back after the final counts
        XCTAssertEqual(reports.all, [100])
        XCTAssertFalse(observer.wants(progress(60), now: 2), "nothing is polled after the end")
    }

    func testTheFinalCountsAreReportedEvenIfAPollChoseThemFirst() {
        // Given a poll that already chose the final counts but has not reported them yet
        let reports = Recorder<Int64>()
        let observer = ProgressObserver(interval: 0) { reports.append($0.bytesReceived) }
        XCTAssertTrue(observer.wants(progress(100), now: 1))

        // When the final report overtakes it
        observer.report(progress(100), force: true)
        observer.report(progress(100))

        // Then the handler gets them exactly once
        XCTAssertEqual(reports.all, [100])
    }

    func testInOrderReportsAreAllMadeAndTheFinalOneIsNotRepeated() {
        // Given polls at 40 and 100 reported in order
        let reports = Recorder<Int64>()
        let observer = ProgressObserver(interval: 0) { reports.append($0.bytesReceived) }
        for (received, now) in [(Int64(40), UInt64(1)), (100, 2)] {
            XCTAssertTrue(observer.wants(progress(received), now: now))
            observer.report(progress(received))
        }

        // When the final report has the same counts
        observer.report(progress(100), force: true)

        // Then it is not repeated
        XCTAssertEqual(reports.all, [40, 100])
    }

    func testPollsWithinTheIntervalOrUnchangedAreSkipped() {
        // Given an interval of 100 ms (in nanoseconds of uptime)
        let observer = ProgressObserver(interval: 0.1) { _ in }

        // Then only a changed value after the interval is wanted
        XCTAssertTrue(observer.wants(progress(10), now: 1_000_000_000))
        XCTAssertFalse(observer.wants(progress(20), now: 1_050_000_000), "within the interval")
        XCTAssertFalse(observer.wants(progress(10), now: 1_200_000_000), "unchanged")
        XCTAssertTrue(observer.wants(progress(20), now: 1_200_000_000))
    }

    func testCountsThatGoBackAreNotReported() {
        // Given a poll that chose 60 bytes received and 10 sent
        let observer = ProgressObserver(interval: 0) { _ in }
        XCTAssertTrue(observer.wants(TransferProgress(bytesSent: 10, bytesReceived: 60), now: 1))

        // Then fewer bytes either way are skipped (a transfer read as it ends, a retry from zero),
        // and the next counts past them are reported
        XCTAssertFalse(observer.wants(TransferProgress(bytesSent: 10, bytesReceived: 0), now: 2))
        XCTAssertFalse(observer.wants(TransferProgress(bytesSent: 0, bytesReceived: 80), now: 3))
        XCTAssertTrue(observer.wants(TransferProgress(bytesSent: 10, bytesReceived: 80), now: 4))
    }
}
