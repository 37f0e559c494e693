import { RESOURCES, type CertificateSigningRequest, type Node, type SubjectAccessReview } from '@skiff/api';
import { WorkQueue } from '@skiff/client';
import { runWhenSynced } from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { isApproved, isDenied, isIssued, trueCondition, withCondition } from './conditions.js';
import { ipConversions } from './der.js';
import { CsrError } from './errors.js';
import { APPROVAL_PERMISSION, APPROVING_CONTROLLER, CONDITION, NODE_USER_PREFIX, REASON, SIGNER } from './names.js';
import { parseCertificateRequest, type CertificateRequest } from './request.js';
import { kubeletClientProblem, kubeletServingProblem } from './rules.js';

export interface ApproverSettings {
  /** Approve kubelet-serving requests whose names are the node's own (upstream leaves them to an external approver). */
  approveKubeletServing: boolean;
}

/** The Node address types that are DNS names a kubelet serving certificate may carry. */
const NODE_DNS_ADDRESS_TYPES = new Set(['Hostname', 'InternalDNS', 'ExternalDNS']);

/** An IP address as its bytes, so that two spellings of one IPv6 address compare equal; undefined when it is no IP. */
const ipKey = (address: string): string | undefined => ipConversions.bytesFromIP(address) ?? undefined;

/**
 * kube-controller-manager's `csrapproving`: approves kubelets' client certificate requests (signer
 * kube-apiserver-client-kubelet) whose requester a SubjectAccessReview allows to create
 * `certificatesigningrequests/nodeclient`, or, asking for itself, `…/selfnodeclient`. Unless switched off, it also
 * approves a node's serving certificate requests (signer kubelet-serving) for names and addresses the Node object
 * holds. Anything else is left for someone else to approve or deny.
 */
export class CsrApprover {
  private readonly queue = new WorkQueue<string>({ name: APPROVING_CONTROLLER });
  private readonly csrs: Informer<CertificateSigningRequest>;
  private readonly nodes: Informer<Node> | undefined;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly settings: ApproverSettings,
  ) {
    this.csrs = ctx.informers.informer<CertificateSigningRequest>(RESOURCES.certificatesigningrequests);
    const enqueue = (csr: CertificateSigningRequest) => {
      if (this.awaitsApproval(csr)) this.queue.add(csr.metadata.name!);
    };
    this.csrs.addHandlers({ add: enqueue, update: (_old, csr) => enqueue(csr) });
    if (settings.approveKubeletServing) {
      this.nodes = ctx.informers.informer<Node>(RESOURCES.nodes);
      // A serving request waits for its Node and for the addresses it names to appear there.
      const nodeChanged = (node: Node) => {
        const requester = NODE_USER_PREFIX + node.metadata.name;
        for (const csr of this.csrs.list())
          if (csr.spec.signerName === SIGNER.KUBELET_SERVING && csr.spec.username === requester && this.awaitsApproval(csr)) this.queue.add(csr.metadata.name!);
      };
      this.nodes.addHandlers({ add: nodeChanged, update: (_old, node) => nodeChanged(node) });
    }
  }

  run(workers: number): Promise<void> {
    const informers = this.nodes ? [this.csrs, this.nodes] : [this.csrs];
    return runWhenSynced(this.ctx, { informers, queue: this.queue, workers, sync: (name) => this.sync(name) });
  }

  /** Approves one request when its kind and requester allow it; otherwise leaves it alone. */
  async sync(name: string): Promise<void> {
    const csr = this.csrs.get(name);
    if (!csr || !this.awaitsApproval(csr)) return;
    let request: CertificateRequest;
    try {
      request = parseCertificateRequest(csr.spec.request);
    } catch (err) {
      if (!(err instanceof CsrError)) throw err;
      this.ctx.logger.debug({ csr: name, err }, 'certificate signing request not auto-approved: unreadable');
      return;
    }
    const reason =
      csr.spec.signerName === SIGNER.KUBE_APISERVER_CLIENT_KUBELET ? await this.kubeletClientApproval(csr, request) : this.kubeletServingApproval(csr, request);
    if (!reason) return;
    await this.ctx.client.update<CertificateSigningRequest>(
      RESOURCES.certificatesigningrequests,
      withCondition(csr, trueCondition(CONDITION.APPROVED, REASON.AUTO_APPROVED, `Approved by ${APPROVING_CONTROLLER}: ${reason}.`)),
      { subresource: 'approval' },
    );
    this.ctx.logger.info({ csr: name, signer: csr.spec.signerName, requester: csr.spec.username }, 'certificate signing request auto-approved');
  }

  /** Pending, unsigned, and of a signer this controller approves for. */
  private awaitsApproval(csr: CertificateSigningRequest): boolean {
    const signer = csr.spec.signerName;
    const known = signer === SIGNER.KUBE_APISERVER_CLIENT_KUBELET || (signer === SIGNER.KUBELET_SERVING && this.settings.approveKubeletServing);
    return known && !isApproved(csr) && !isDenied(csr) && !isIssued(csr);
  }

  /** Why a kubelet client request is approved: a node client request whose requester holds the permission. */
  private async kubeletClientApproval(csr: CertificateSigningRequest, request: CertificateRequest): Promise<string | undefined> {
    if (kubeletClientProblem(request, csr.spec.usages ?? [])) return undefined;
    const permissions: string[] = [APPROVAL_PERMISSION.NODE_CLIENT];
    if (csr.spec.username === request.commonName) permissions.push(APPROVAL_PERMISSION.SELF_NODE_CLIENT);
    for (const subresource of permissions) {
      if (await this.requesterMay(csr, subresource))
        return `${csr.spec.username} may create ${APPROVAL_PERMISSION.RESOURCE}/${subresource} for a node client certificate`;
    }
    return undefined;
  }

  /** Asks the authorizers whether the requester may create `certificatesigningrequests/<subresource>`. */
  private async requesterMay(csr: CertificateSigningRequest, subresource: string): Promise<boolean> {
    const { username, groups, uid, extra } = csr.spec;
    if (!username && !groups?.length) return false;
    const review = await this.ctx.client.create<SubjectAccessReview>(RESOURCES.subjectaccessreviews, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      metadata: {},
      spec: {
        ...{},
        ...(username ? { user: username } : {}),
        ...(groups ? { groups } : {}),
        ...(uid ? { uid } : {}),
        ...(extra ? { extra } : {}),
        resourceAttributes: { group: APPROVAL_PERMISSION.GROUP, resource: APPROVAL_PERMISSION.RESOURCE, subresource, verb: 'create' },
      },
    });
    return review.status?.allowed === true;
  }

  /** Why a kubelet serving request is approved: the node asks for itself, for names and addresses its Node object holds. */
  private kubeletServingApproval(csr: CertificateSigningRequest, request: CertificateRequest): string | undefined {
    if (kubeletServingProblem(request, csr.spec.usages ?? [])) return undefined;
    if (csr.spec.username !== request.commonName) return undefined;
    const nodeName = request.commonName.slice(NODE_USER_PREFIX.length);
    const node = this.nodes?.get(nodeName);
    if (!node) return undefined;
    const addresses = node.status?.addresses ?? [];
    const ips = new Set(addresses.map((address) => ipKey(address.address)).filter((key) => key !== undefined));
    const dnsNames = new Set(
      [nodeName, ...addresses.filter((address) => NODE_DNS_ADDRESS_TYPES.has(address.type)).map((address) => address.address)].map((name) =>
        name.toLowerCase(),
      ),
    );
    const ownIp = (ip: string) => {
      const key = ipKey(ip);
      return key !== undefined && ips.has(key);
    };
    if (!request.ipAddresses.every(ownIp) || !request.dnsNames.every((name) => dnsNames.has(name.toLowerCase()))) return undefined;
    return `node ${nodeName} asks for a serving certificate for names and addresses of its own Node object`;
  }
}
