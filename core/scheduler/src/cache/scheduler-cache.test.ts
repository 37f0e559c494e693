import { describe, expect, it } from 'vitest';
import { makeNode, makePod } from '../test-support/objects.js';
import { SchedulerCache } from './scheduler-cache.js';

const bound = (name: string, nodeName: string, cpu = '1') => makePod(name, { cpu }, { nodeName });

describe('SchedulerCache', () => {
  it('sums the requests of the pods bound to each node', () => {
    const cache = new SchedulerCache();
    cache.setNode(makeNode('node-1'));
    cache.setPod('default/a', bound('a', 'node-1'));
    cache.setPod('default/b', bound('b', 'node-1', '500m'));
    expect(cache.nodeInfo('node-1')!.requested).toMatchObject({ milliCPU: 1500, pods: 2 });
    cache.setPod('default/b', bound('b', 'node-1', '250m'));
    expect(cache.nodeInfo('node-1')!.requested).toMatchObject({ milliCPU: 1250, pods: 2 });
    cache.removePod('default/a');
    expect(cache.nodeInfo('node-1')!.requested).toMatchObject({ milliCPU: 250, pods: 1 });
    expect(cache.nodeInfo('node-1')!.allocatable).toMatchObject({ milliCPU: 4000, pods: 110 });
  });

  it('counts an assumed pod until the binding is confirmed or forgotten', () => {
    const cache = new SchedulerCache();
    cache.setNode(makeNode('node-1'));
    const pod = makePod('a', { cpu: '1' });
    cache.assume('default/a', pod, 'node-1');
    expect(pod.spec.nodeName).toBeUndefined();
    expect(cache.isAssumed('default/a')).toBe(true);
    expect(cache.nodeInfo('node-1')!.requested.milliCPU).toBe(1000);
    cache.forget('default/a');
    expect(cache.nodeInfo('node-1')!.requested.milliCPU).toBe(0);

    cache.assume('default/a', pod, 'node-1');
    cache.setPod('default/a', bound('a', 'node-1'));
    cache.forget('default/a');
    expect(cache.isAssumed('default/a')).toBe(false);
    expect(cache.nodeInfo('node-1')!.pods).toHaveLength(1);
  });

  it('holds pods of unknown nodes until the node shows up, and after it goes', () => {
    const cache = new SchedulerCache();
    cache.setPod('default/a', bound('a', 'node-9'));
    expect(cache.nodeInfos()).toEqual([]);
    cache.setNode(makeNode('node-9'));
    expect(cache.nodeInfos().map((info) => info.requested.milliCPU)).toEqual([1000]);
    cache.removeNode('node-9');
    expect(cache.nodeInfos()).toEqual([]);
    cache.setNode(makeNode('node-9'));
    expect(cache.nodeInfo('node-9')!.pods).toHaveLength(1);
  });

  it('keeps one node list until nodes come or go, and updates allocatable in place', () => {
    const cache = new SchedulerCache();
    cache.setNode(makeNode('node-1'));
    const list = cache.nodeInfos();
    cache.setNode(makeNode('node-1', { cpu: '8', memory: '8Gi', pods: 110 }));
    expect(cache.nodeInfos()).toBe(list);
    expect(list[0]!.allocatable.milliCPU).toBe(8000);
    cache.setNode(makeNode('node-2'));
    expect(cache.nodeInfos()).not.toBe(list);
    expect(cache.nodeInfos()).toHaveLength(2);
  });
});
