import { describe, expect, it } from 'vitest';
import { AggregatorRegistry } from 'prom-client';
import { Kernel } from './kernel.js';
import { addMetricsSource, counter, createMetricsRegistry, gatherMetrics, gauge, histogram, seriesCounter, seriesHistogram } from './metrics.js';

describe('metrics registry helpers', () => {
  it('hands out the same metric for the same name, and refuses another type under it', () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const first = counter(registry, { name: 'x_total', help: 'x', labelNames: ['a'] });
    expect(counter(registry, { name: 'x_total', help: 'x', labelNames: ['a'] })).toBe(first);
    expect(() => gauge(registry, { name: 'x_total', help: 'x' })).toThrow(/another type/);
    expect(histogram(registry, { name: 'h_seconds', help: 'h', buckets: [1] })).toBe(histogram(registry, { name: 'h_seconds', help: 'h', buckets: [1] }));
    expect(seriesHistogram(registry, { name: 's_seconds', help: 's', labelNames: [], buckets: [1] })).toBe(
      seriesHistogram(registry, { name: 's_seconds', help: 's', labelNames: [], buckets: [1] }),
    );
  });

  it('gives each kernel its own registry, so two kernels in one process never collide', () => {
    const one = new Kernel({ config: { logLevel: 'silent' } });
    const two = new Kernel({ config: { logLevel: 'silent' } });
    expect(one.resolve('metrics')).not.toBe(two.resolve('metrics'));
    counter(one.resolve('metrics'), { name: 'same_total', help: 'h' }).inc();
    counter(two.resolve('metrics'), { name: 'same_total', help: 'h' }).inc(2);
  });

  it('writes series histograms and counters in the text format, with cumulative buckets', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const h = seriesHistogram(registry, { name: 'op_seconds', help: 'ops', labelNames: ['op'], buckets: [0.1, 1] }).series({ op: 'get' });
    h.observe(0.05);
    h.observe(0.5);
    h.observe(5);
    seriesCounter(registry, { name: 'op_total', help: 'ops', labelNames: ['op'] })
      .series({ op: 'get' })
      .inc(3);
    const text = await registry.metrics();
    expect(text).toContain('# TYPE op_seconds histogram');
    expect(text).toContain('op_seconds_bucket{op="get",le="0.1"} 1');
    expect(text).toContain('op_seconds_bucket{op="get",le="1"} 2');
    expect(text).toContain('op_seconds_bucket{op="get",le="+Inf"} 3');
    expect(text).toContain('op_seconds_sum{op="get"} 5.55');
    expect(text).toContain('op_seconds_count{op="get"} 3');
    expect(text).toContain('op_total{op="get"} 3');
  });

  it('gathers added sources: equal series summed, distinct ones kept, default metrics from the first gather', async () => {
    const registry = createMetricsRegistry();
    counter(registry, { name: 'req_total', help: 'r', labelNames: ['thread'] }).inc({ thread: '0' }, 2);
    const other = createMetricsRegistry({ defaultMetrics: false });
    counter(other, { name: 'req_total', help: 'r', labelNames: ['thread'] }).inc({ thread: '1' }, 5);
    const remove = addMetricsSource(registry, () => other.getMetricsAsJSON());
    const text = await (await gatherMetrics(registry)).metrics();
    expect(text).toContain('req_total{thread="0"} 2');
    expect(text).toContain('req_total{thread="1"} 5');
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    remove();
    const alone = await (await gatherMetrics(registry)).metrics();
    expect(alone).not.toContain('thread="1"');
    expect(AggregatorRegistry).toBeDefined();
  });
});
