// Throughput of real FlinkCEP (Flink 2.3) on the two queries of bench/flinkcep.py.
//
//   java -cp <CepDriver classes>:<pyflink/lib/*>:<this class> BenchFlinkCep
//        --rows=N --keys=K --seed=S [--mode=nfa|job] [--parallelism=P] [--query=q1|q2|both]
//        [--spacing=D]
//
// Events are generated here with the same formula as bench/flinkcep.py (no file, no JSON):
//   h = splitmix64(seed * 2^32 + i), i = 0..N-1
//   id = i + 1, key = i % K, name = 1 + h mod 3 (unsigned), price = (h >>> 8) mod 10,
//   ts = D * i + (h >>> 16) mod D   [ms; strictly increasing; D = --spacing, 250 by default]
//
// q1: the paper's Example 1, Pattern.begin("p", noSkip()).where(name == 1 && sum(price of
//     ctx.getEventsForPattern("p")) + price <= 10).oneOrMore().until(name == 2)
// q2: begin("a", noSkip()).where(name == 1).followedByAny("b").where(name == 2)
//     .within(6001 ms)   (Flink keeps last.ts - first.ts < within; SQL WITHIN '6' SECOND keeps
//     <= 6000 ms, the same on integer milliseconds)
//
// Modes:
//   nfa  Flink's own NFACompiler/NFA/SharedBuffer, one NFA per key, driven like CepOperator
//        (advanceTime(ts) then process(event) for the event's key; at the end
//        advanceTime(Long.MAX_VALUE)); single thread, in-memory keyed state
//        (CepDriver.MemStateStore).  Measures the CEP library itself.
//   job  A DataStream job on a local MiniCluster: one ordered source (fromSequence -> map(generate) -> monotonous
//        event-time watermarks, parallelism 1) -> keyBy(key) -> CEP.pattern(..).process(..) -> discard, with
//        parallelism P (heap state backend); the checksums come back as accumulators.
//
// Output: one JSON line per query:
//   {"query":"q1","mode":"nfa","rows":N,"matches":M,"sum_first":..,"sum_last":..,"sum_size":..,"seconds":s}
// (sum_first/sum_last: sums of the ids of each match's first/last event; sum_size: total events)

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.cep.CEP;
import org.apache.flink.cep.configuration.SharedBufferCacheConfig;
import org.apache.flink.cep.functions.PatternProcessFunction;
import org.apache.flink.cep.nfa.NFA;
import org.apache.flink.cep.nfa.NFAState;
import org.apache.flink.cep.nfa.aftermatch.AfterMatchSkipStrategy;
import org.apache.flink.cep.nfa.compiler.NFACompiler;
import org.apache.flink.cep.nfa.sharedbuffer.SharedBuffer;
import org.apache.flink.cep.nfa.sharedbuffer.SharedBufferAccessor;
import org.apache.flink.cep.pattern.Pattern;
import org.apache.flink.cep.pattern.conditions.IterativeCondition;
import org.apache.flink.cep.pattern.conditions.SimpleCondition;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;

public class BenchFlinkCep {

    static long splitmix64(long x) {
        long z = x + 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    static long spacing = 250;

    static CepDriver.Event event(long i, long seed) {
        long h = splitmix64(seed * 0x100000000L + i);
        long name = 1 + Long.remainderUnsigned(h, 3);
        long price = (h >>> 8) % 10;
        long ts = spacing * i + (h >>> 16) % spacing;
        return new CepDriver.Event(i + 1, name, price, ts);
    }

    // ---- the two patterns -------------------------------------------------------------------

    static final class SumLe extends IterativeCondition<CepDriver.Event> {
        public boolean filter(CepDriver.Event e, Context<CepDriver.Event> ctx) throws Exception {
            if (e.name != 1) return false;
            double s = e.price;
            for (CepDriver.Event x : ctx.getEventsForPattern("p")) s += x.price;
            return s <= 10;
        }
    }

    static final class NameIs extends SimpleCondition<CepDriver.Event> {
        final long n;
        NameIs(long n) { this.n = n; }
        public boolean filter(CepDriver.Event e) { return e.name == n; }
    }

    static Pattern<CepDriver.Event, CepDriver.Event> pattern(String q) {
        AfterMatchSkipStrategy skip = AfterMatchSkipStrategy.noSkip();
        if (q.equals("q1"))
            return Pattern.<CepDriver.Event>begin("p", skip).where(new SumLe()).oneOrMore().until(new NameIs(2));
        return Pattern.<CepDriver.Event>begin("a", skip).where(new NameIs(1))
                .followedByAny("b").where(new NameIs(2)).within(Duration.ofMillis(6001));
    }

    static String firstName(String q) { return q.equals("q1") ? "p" : "a"; }
    static String lastName(String q) { return q.equals("q1") ? "p" : "b"; }

    // ---- checksums --------------------------------------------------------------------------

    static final class Sums {
        long matches, first, last, size;
        void add(String q, Map<String, List<CepDriver.Event>> m) {
            List<CepDriver.Event> f = m.get(firstName(q)), l = m.get(lastName(q));
            matches++;
            first += f.get(0).id;
            last += l.get(l.size() - 1).id;
            for (List<CepDriver.Event> evs : m.values()) size += evs.size();
        }
    }

    // ---- nfa mode ---------------------------------------------------------------------------

    static Sums runNfa(String q, long rows, int keys, long seed) throws Exception {
        TypeSerializer<CepDriver.Event> ser =
                TypeInformation.of(CepDriver.Event.class).createSerializer(new SerializerConfigImpl());
        Pattern<CepDriver.Event, CepDriver.Event> p = pattern(q);
        AfterMatchSkipStrategy skip = p.getAfterMatchSkipStrategy();
        @SuppressWarnings("unchecked") NFA<CepDriver.Event>[] nfa = new NFA[keys];
        @SuppressWarnings("unchecked") SharedBuffer<CepDriver.Event>[] buf = new SharedBuffer[keys];
        NFAState[] state = new NFAState[keys];
        for (int k = 0; k < keys; k++) {
            nfa[k] = NFACompiler.compileFactory(p, false).createNFA();
            buf[k] = new SharedBuffer<>(new CepDriver.MemStateStore(), ser, new SharedBufferCacheConfig());
            state[k] = nfa[k].createInitialNFAState();
        }
        org.apache.flink.cep.time.TimerService timers = () -> 0L;
        Sums sums = new Sums();
        for (long i = 0; i < rows; i++) {
            CepDriver.Event e = event(i, seed);
            int k = (int) (i % keys);
            try (SharedBufferAccessor<CepDriver.Event> acc = buf[k].getAccessor()) {
                Tuple2<Collection<Map<String, List<CepDriver.Event>>>, Collection<Tuple2<Map<String, List<CepDriver.Event>>, Long>>> r =
                        nfa[k].advanceTime(acc, state[k], e.ts, skip);
                for (Map<String, List<CepDriver.Event>> m : r.f0) sums.add(q, m);
                for (Map<String, List<CepDriver.Event>> m : nfa[k].process(acc, state[k], e, e.ts, skip, timers))
                    sums.add(q, m);
            }
        }
        for (int k = 0; k < keys; k++) {
            try (SharedBufferAccessor<CepDriver.Event> acc = buf[k].getAccessor()) {
                for (Map<String, List<CepDriver.Event>> m : nfa[k].advanceTime(acc, state[k], Long.MAX_VALUE, skip).f0)
                    sums.add(q, m);
            }
            buf[k].releaseCacheStatisticsTimer();
        }
        return sums;
    }

    // ---- job mode ---------------------------------------------------------------------------

    /** One match -> (first id, last id, number of events). */
    static final class Emit extends PatternProcessFunction<CepDriver.Event, Tuple3<Long, Long, Long>> {
        final String q;
        Emit(String q) { this.q = q; }
        @Override
        public void processMatch(Map<String, List<CepDriver.Event>> m, Context ctx,
                                 Collector<Tuple3<Long, Long, Long>> out) {
            List<CepDriver.Event> f = m.get(firstName(q)), l = m.get(lastName(q));
            long n = 0;
            for (List<CepDriver.Event> evs : m.values()) n += evs.size();
            out.collect(Tuple3.of(f.get(0).id, l.get(l.size() - 1).id, n));
        }
    }

    /** Sums the matches into accumulators (the CEP operator's context has none). */
    static final class Count extends RichMapFunction<Tuple3<Long, Long, Long>, Long> {
        transient LongCounter matches, first, last, size;
        @Override
        public void open(org.apache.flink.api.common.functions.OpenContext ctx) {
            matches = getRuntimeContext().getLongCounter("matches");
            first = getRuntimeContext().getLongCounter("first");
            last = getRuntimeContext().getLongCounter("last");
            size = getRuntimeContext().getLongCounter("size");
        }
        @Override
        public Long map(Tuple3<Long, Long, Long> t) {
            matches.add(1);
            first.add(t.f0);
            last.add(t.f1);
            size.add(t.f2);
            return 0L;
        }
    }

    static Sums runJob(String q, long rows, int keys, long seed, int parallelism) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("rest.bind-port", "0");
        conf.setString("taskmanager.memory.network.min", "256m");
        conf.setString("taskmanager.memory.network.max", "256m");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(parallelism, conf);
        final long s = seed;
        final int nk = keys;
        // one ordered source (a parallel one splits the sequence into ranges, so the watermark
        // of the early range holds back every event of the later ones)
        DataStream<CepDriver.Event> in = env.fromSequence(0, rows - 1).setParallelism(1)
                .map(i -> event(i, s)).setParallelism(1).returns(TypeInformation.of(CepDriver.Event.class))
                .assignTimestampsAndWatermarks(WatermarkStrategy.<CepDriver.Event>forMonotonousTimestamps()
                        .withTimestampAssigner((e, t) -> e.ts)).setParallelism(1);
        CEP.pattern(in.keyBy(e -> (int) ((e.id - 1) % nk)), pattern(q)).inEventTime()
                .process(new Emit(q)).map(new Count()).sinkTo(new DiscardingSink<>());
        JobExecutionResult res = env.execute("bench-flinkcep-" + q);
        Sums sums = new Sums();
        sums.matches = res.<Long>getAccumulatorResult("matches") == null ? 0 : res.<Long>getAccumulatorResult("matches");
        sums.first = res.<Long>getAccumulatorResult("first") == null ? 0 : res.<Long>getAccumulatorResult("first");
        sums.last = res.<Long>getAccumulatorResult("last") == null ? 0 : res.<Long>getAccumulatorResult("last");
        sums.size = res.<Long>getAccumulatorResult("size") == null ? 0 : res.<Long>getAccumulatorResult("size");
        return sums;
    }

    public static void main(String[] args) throws Exception {
        long rows = 1_000_000, seed = 7;
        int keys = 4, parallelism = 2;
        String mode = "nfa", query = "both";
        for (String a : args) {
            String v = a.substring(a.indexOf('=') + 1);
            if (a.startsWith("--rows=")) rows = Long.parseLong(v);
            else if (a.startsWith("--keys=")) keys = Integer.parseInt(v);
            else if (a.startsWith("--seed=")) seed = Long.parseLong(v);
            else if (a.startsWith("--mode=")) mode = v;
            else if (a.startsWith("--parallelism=")) parallelism = Integer.parseInt(v);
            else if (a.startsWith("--query=")) query = v;
            else if (a.startsWith("--spacing=")) spacing = Long.parseLong(v);
            else throw new IllegalArgumentException("unknown argument " + a);
        }
        for (String q : query.equals("both") ? new String[] {"q1", "q2"} : new String[] {query}) {
            long t0 = System.nanoTime();
            Sums s = mode.equals("job") ? runJob(q, rows, keys, seed, parallelism) : runNfa(q, rows, keys, seed);
            double secs = (System.nanoTime() - t0) / 1e9;
            System.out.println("{\"query\":\"" + q + "\",\"mode\":\"" + mode + "\",\"rows\":" + rows
                    + ",\"matches\":" + s.matches + ",\"sum_first\":" + s.first + ",\"sum_last\":" + s.last
                    + ",\"sum_size\":" + s.size + ",\"seconds\":" + secs + "}");
            System.out.flush();
        }
        System.exit(0);
    }
}
